"""The brain: reads pinned to a commit, and writes that each make one commit.

Everything here is in terms of notes and commits; it knows nothing of HTTP or
MCP. The tool functions (cortex.tools) call it and shape the replies.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol, TypeVar
from zoneinfo import ZoneInfo

from cortex.brain.contents_page import (
    ATTRIBUTES,
    CONTENTS_MARKER,
    CONTENTS_PAGE,
    contents_page_after,
    is_generated_contents_page,
    with_merge_line,
)
from cortex.brain.journal import Journal
from cortex.brain.note_writes import (
    CaptureReply,
    LinksMoved,
    WriteMode,
    WriteReply,
    WriteRequest,
    note_changes,
    push_fields,
    push_note,
    write_body,
    write_reply,
    write_request,
)
from cortex.brain.text_rules import append_text, strict_text, within_cap
from cortex.brain.trailers import REQUEST_LOOKBACK, REQUEST_TRAILER, Actor, commit_message
from cortex.errors import AlreadyApplied, BadInput, NoNote, StoreError
from cortex.index.corpus import Corpus, SavedSnapshot
from cortex.index.snapshot import Snapshot
from cortex.notes.links import LinkResolver, link_text, rewrite_links, url_to, wikilink_unsafe
from cortex.notes.nearest import did_you_mean, nearest
from cortex.notes.note import Note, decode, link_key, parse_note
from cortex.notes.paths import check_content, check_path, check_text, is_note_path, tool_readable
from cortex.store.git import GitStore, View
from cortex.store.types import Change, Changes, CommitInfo, Identity, WriteResult

if TYPE_CHECKING:  # the arm is set after the brain is made (app.server); its import costs numpy
    from cortex.meaning.closeness import Meaning

__all__ = [
    "INDEX_WAIT",
    "MOVE_TRIES",
    "NO_COMMITS",
    "NO_COMMITS_HINT",
    "OWNER_GIT_WAIT",
    "PAGE",
    "Brain",
    "WorkdirHook",
]

# How many times a move re-takes the list of notes linking to it when another
# writer changed that list mid-move (each try is a full compare-and-swap loop).
MOVE_TRIES = 3
# How long a search waits for the first build of the index before it is told to
# come back (NotReady): under a typical client's 60 s tool timeout, and long
# enough for a first build of a 300 MB brain to be most of the way done.
INDEX_WAIT = 30.0
# How long a write waits for an operation of the owner's (a stopped rebase, a merge with a
# conflict) to end before it is refused with nothing written: within a client's tool timeout.
OWNER_GIT_WAIT = 10.0
# An empty repository is served (its first write makes the first commit); what to do about
# it is said once at start-up, and again to a read that finds nothing to read.
NO_COMMITS_HINT = (
    "write a first note with brain_write (mode create), or commit one by hand (push one, to a bare "
    "repository); it is served from then on"
)
NO_COMMITS = f"the brain has no commits yet: {NO_COMMITS_HINT}"
# Who writes INDEX.md again when a head Cortex did not make left it behind its notes.
PAGE = Actor(door="editor", tool="contents-page", client="working tree")


def _link_name(path_or_link: str) -> str:
    """The name a bare `[[link]]` compares: the last segment, without `.md`."""
    name = path_or_link.strip().rsplit("/", 1)[-1]
    return name[:-3] if name.lower().endswith(".md") else name


def _wikilink_can_say(text: str, source: str, meant: str) -> None:
    """BadInput when the [[wikilink]] in `source` that must name `meant` as `text` cannot hold it.

    Refused rather than written as a Markdown link: that would change the owner's own link in
    a note they did not name, and Obsidian documents these characters as unsafe in any link.
    """
    unsafe = wikilink_unsafe(text)
    if unsafe:
        raise BadInput(
            f"refused: a [[wikilink]] in {source} would have to name {meant} as [[{text}]], and {unsafe} in a "
            "wikilink is link syntax (Obsidian's too); nothing was changed. Choose a name without # ^ [ ] | or %%"
        )


# A write's reply: `_said_unwritten` adds what the working tree could not take.
R = TypeVar("R", WriteReply, CaptureReply, dict[str, Any])


class WorkdirHook(Protocol):
    """What a brain with a working tree calls around each write (cortex.brain.watcher.Editor)."""

    def before_write(self, paths: list[str]) -> None:
        """Commit the hand edits to `paths`, so a tool write lands on top of them."""

    def after_write(self, result: WriteResult) -> Mapping[str, str | None]:
        """Put the commit's files on disk where the disk still holds what it replaced; the
        blob each file on disk then holds (None: no file), of those it read or wrote."""


def _names(note: Note | None) -> tuple[str, ...]:
    """A note's other names, which a path asked for may give instead: its title and aliases."""
    return () if note is None else (note.title, *note.aliases)


def _names_a_commit(at: str) -> bool:
    """Whether `as_of` is written as a commit SHA (7 or more hex digits) rather than a time."""
    at = at.strip()
    return len(at) >= 7 and all(c in "0123456789abcdef" for c in at.lower())


class Brain:
    """One brain: a Git store, its corpus, a time zone and a clock."""

    def __init__(
        self,
        store: GitStore,
        tz: str = "UTC",
        clock: Callable[[], dt.datetime] | None = None,
        index: str = "auto",
        saved: SavedSnapshot | None = None,
        workers: int | None = None,
    ):
        # `tz` and `index` come checked: the settings refuse a zone zoneinfo does not know and
        # an index policy other than auto, on or off, in one line naming the variable.
        self.store = store
        # The contents page (INDEX.md, CORTEX_INDEX as `index`): `auto` keeps one up to date
        # only where the brain already has one (every brain `cortex init` makes from the
        # template); a person's own repository gets none unless they ask (`on`). A
        # Docusaurus or Jekyll repo would publish it.
        self.contents_policy = index
        self._own_page: dict[str, bool] = {}  # INDEX.md blob -> whether Cortex wrote it
        # The commit whose INDEX.md needs nothing (it matches its notes, or is not Cortex's to
        # keep): this process's last commit, or a head `refresh_contents_page` checked. A write
        # on any other head (the owner's revert or rebase, a push) compares the page whole.
        self._page_right_at: str | None = None
        head = store.head() if index == "on" else None
        blob = store.blob_at(head, CONTENTS_PAGE) if head else None
        if blob is not None and not self._page_is_ours(blob):
            raise StoreError(
                f"CORTEX_INDEX=on, but the INDEX.md in {store.path} is not one Cortex wrote (it has no "
                f'"{CONTENTS_MARKER}" line): it is yours and is never replaced; use CORTEX_INDEX=auto or off'
            )
        # `saved`: the index file in the state folder (cortex.index.saved); `workers`: CORTEX_BUILD_WORKERS
        self.corpus = Corpus(store, saved, workers)
        self.tz = ZoneInfo(tz)
        self._clock = clock or (lambda: dt.datetime.now(dt.UTC))
        if clock is not None:
            store.clock = clock  # commits are stamped on the same clock
        # The working-tree watcher (cortex.brain.watcher.Editor), when the brain has a working tree.
        self.workdir_hook: WorkdirHook | None = None
        # The meaning arm (cortex.meaning.closeness.Meaning), when search and ask may use it.
        self.meaning: Meaning | None = None
        # Every write acknowledged, and whether Git's staging index took it (brain.journal).
        self.journal = Journal.for_store(store)
        # Per thread: its writes that made a file, their `owner_git` mark looked at once the lock is free.
        self._unsettled: dict[int, list[str]] = {}
        self.owner_git_wait = OWNER_GIT_WAIT

    # -- time -------------------------------------------------------------

    def now(self) -> dt.datetime:
        return self._clock().astimezone(self.tz)

    def today(self) -> dt.date:
        return self.now().date()

    def parse_time(self, value: str) -> dt.datetime:
        """An ISO-8601 time; a bare date or a time without zone is in the brain's zone."""
        check_text(value, "time")
        try:
            when = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise BadInput(f"not an ISO-8601 time: {value[:40]!r}") from None
        if when.tzinfo is None:
            when = when.replace(tzinfo=self.tz)
        return when

    def day_of(self, at: str | None) -> tuple[dt.date, bool]:
        """The day claims are judged on when reading `as_of=at`, and whether `at` dated them.

        An ISO time: its own day, and only claims valid then count. The head or a commit
        SHA: today. A SHA pins the notes' bytes, not the calendar: a client verifying at
        the SHA it read must not see a claim that has expired since as current.
        """
        if not at or _names_a_commit(at):
            return self.today(), False
        return self.parse_time(at).astimezone(self.tz).date(), True

    def resolve_at(self, at: str) -> str:
        """A commit SHA for `at`: a (short) SHA, or an ISO time (the head at that time)."""
        at = at.strip()
        if _names_a_commit(at):
            try:
                return self.store.resolve_rev(at)
            except StoreError:
                raise BadInput(f"unknown commit {at}") from None
        when = self.parse_time(at)
        sha = self.store.commit_at(when)
        if sha is None:
            raise BadInput(f"the brain has no commit at or before {when.isoformat()}")
        return sha

    # -- reads ------------------------------------------------------------

    def snapshot(self, at: str | None = None) -> Snapshot:
        """The snapshot to serve: the head, or the commit named by `at`."""
        if at:
            return self.corpus.at(self.resolve_at(at))
        snap = self.corpus.latest(wait=INDEX_WAIT)
        if snap is None:
            raise StoreError(NO_COMMITS)
        return snap

    def index_state(self) -> dict[str, object]:
        """Whether search is ready (and the note count) or how far its first build has got."""
        state = self.corpus.state()
        if state["index"] == "not built":
            if self.store.head() is None:
                return {"index": "ready", "notes": 0}
            self.corpus.warm()
            state = self.corpus.state()
        if self.meaning is not None:  # how far the arm has got; its reason and more: ?detail=1
            full = self.meaning.status()
            state = {**state, "meaning": full["meaning"], "meaning_notes": full["meaning_notes"]}
            state.update({k: full[k] for k in ("meaning_left", "meaning_eta_s") if k in full})  # how long it will take
        return state

    def read(self, path: str, at: str | None = None, *, own_files: bool = False) -> tuple[str, str, Note]:
        """(sha, blob, note) for one file at the head or at `at`; archive/ included; `.cortex/`
        only with `own_files` (the console's tombstone and receipt pages)."""
        path = check_path(path, for_write=False)
        if not own_files:
            tool_readable(path)
        sha = self.resolve_at(at) if at else self.store.head()
        if sha is None:
            raise StoreError(NO_COMMITS)
        path = self.store.stored_path(sha, path)  # NFC asked, NFD stored (macOS): the same note
        blob = self.store.blob_at(sha, path)
        if blob is None:
            raise NoNote(f"no note at {path} in commit {sha[:12]}{did_you_mean(self.nearest_paths(path, sha))}")
        snap = self.corpus.built()  # a read never waits for a corpus build
        if snap is not None and snap.sha == sha and snap.blobs.get(path) == blob:
            return sha, blob, snap.notes[path]
        return sha, blob, parse_note(path, decode(self.store.blob_bytes(blob)))

    def nearest_paths(self, path: str, sha: str) -> list[str]:
        """The files of commit `sha` nearest `path` (`nearest.nearest`), by their titles and
        aliases too where the index has read them: for a refusal of a path that is not there."""
        snap = self.corpus.built()
        notes = snap.notes if snap is not None and snap.sha == sha else {}
        return nearest(path, {p: _names(notes.get(p)) for p in self.store.entries(sha)})

    # -- files and history: what doors, the console and services may ask of Git --

    def head(self) -> str | None:
        """The branch head SHA, read fresh (sees hand edits and pushes)."""
        return self.store.head()

    @property
    def branch(self) -> str:
        """The branch served (the console's Status page names it)."""
        return self.store.branch

    def files(self, sha: str) -> dict[str, str]:
        """Every file of commit `sha`: path -> blob id."""
        return self.store.entries(sha)

    def changed_between(self, old: str, new: str) -> list[Change]:
        """The files that differ between two commits, by tree diff."""
        return self.store.diff(old, new)

    def files_under(self, prefix: str, sha: str | None) -> dict[str, bytes]:
        """The bytes of every file under `prefix` at commit `sha` (machine files: policies, tombstones)."""
        if sha is None:
            return {}
        # A walk of the whole tree: tens of ms at 10,000 notes; callers cache by SHA.
        return {p: self.store.blob_bytes(b) for p, b in sorted(self.store.entries(sha).items()) if p.startswith(prefix)}

    def text_at(self, sha: str | None, path: str) -> str | None:
        """The text of `path` at commit `sha`, or None when it is absent there."""
        blob = self.store.blob_at(sha, path) if sha else None
        return decode(self.store.blob_bytes(blob)) if blob else None

    def blob_bytes(self, blob: str) -> bytes:
        return self.store.blob_bytes(blob)

    def history(
        self, path: str | None = None, limit: int = 20, before: str | None = None
    ) -> tuple[list[CommitInfo], bool]:
        """Commits newest first (touching `path` if given), and whether more remain."""
        return self.store.history(path, limit, before)

    def commit_info(self, rev: str) -> CommitInfo:
        """One commit by (short) SHA; StoreError when unknown."""
        return self.store.commit_info(self.store.resolve_rev(rev))

    def changes(self, info: CommitInfo) -> list[Change]:
        """The files commit `info` changed against its first parent (every file for a root commit)."""
        if info.parents:
            return self.store.diff(info.parents[0], info.sha)
        return [Change(p, None, b) for p, b in self.store.entries(info.sha).items()]

    def stored_path(self, path: str, sha: str | None = None) -> str:
        """`path` as the brain stores it (at `sha`, else the head), matching any Unicode
        normalisation: a write keeps the bytes of a name already on disk."""
        return self.store.stored_path(sha if sha is not None else self.store.head(), path)

    def collision(self, path: str, sha: str | None = None) -> str | None:
        """Why a note at `path` would replace a folder or turn a note into a folder (at `sha`, else the head)."""
        return self.store.collision(sha if sha is not None else self.store.head(), {path: b""})

    # -- writes -----------------------------------------------------------

    def check_place(self, path: str) -> None:
        """BadInput when a note at `path` would replace a folder or turn a note into a folder.

        Every commit is checked again inside the compare-and-swap; this lets a
        proposal be refused when it is made, not only when the owner accepts it.
        """
        why = self.collision(path)
        if why:
            raise BadInput(why.replace("nothing was committed", "nothing was changed"))

    def _commit(
        self,
        change: Callable[[View], Changes],
        subject: str,
        actor: Actor,
        body: str = "",
        author: Identity | None = None,
    ) -> WriteResult:
        """One commit holding `change` plus a regenerated contents page (INDEX.md)."""
        # The notes the contents page check parsed from the bytes of the draft that was committed
        # (each try starts afresh): the corpus moves onto the commit without parsing them again.
        parsed: dict[str, Note] = {}

        def with_contents_page(view: View) -> Changes:
            parsed.clear()
            if actor.request and view.sha:
                # Inside the compare-and-swap: a retry racing its own first attempt
                # still finds it, because a moved head re-runs this check.
                done = self.store.find_trailer(view.sha, REQUEST_TRAILER, actor.request, REQUEST_LOOKBACK)
                if done:
                    raise AlreadyApplied(done)
            changes = change(view)
            page = view.blob_of(CONTENTS_PAGE)
            if self.contents_policy == "off" or (self.contents_policy == "auto" and page is None):
                return changes
            if page is not None and not self._page_is_ours(page):
                return changes  # a person's own INDEX.md: never touched
            snap = self.corpus.peek(view.sha) if view.sha else None
            updated = {
                p: (None if d is None else parse_note(p, decode(d))) for p, d in changes.items() if is_note_path(p)
            }
            parsed.update((p, n) for p, n in updated.items() if n is not None)
            before = snap.notes if snap else None
            if page is not None and view.sha != self._page_right_at:
                # A head this process did not make: its page may lag its notes (the owner's
                # revert merged it line by line), so it is compared whole, not row by row.
                new_page = contents_page_after(before, updated, False)
                if new_page == view.read(CONTENTS_PAGE):
                    new_page = None
            else:
                new_page = contents_page_after(before, updated, page is not None)
            if new_page is not None:
                changes[CONTENTS_PAGE] = new_page
                attributes = with_merge_line(view.read(ATTRIBUTES))  # brains made before issue 62
                if attributes is not None:
                    changes[ATTRIBUTES] = attributes
            return changes

        result = self.store.commit(with_contents_page, commit_message(subject, actor, body), author=author)
        self._page_right_at = result.sha
        self.corpus.follow(
            result.sha,
            result.parent,
            [Change(p, result.old_blobs.get(p), new) for p, new in result.new_blobs.items()],
            parsed,
        )
        return result

    def refresh_contents_page(self) -> WriteResult | None:
        """INDEX.md written whole again, in a commit of its own, when the head's no longer
        matches its notes: after the owner's revert or rebase (whose union merge may keep
        lines of both sides) or a hand commit. None when it needs nothing (right, not Cortex's,
        CORTEX_INDEX=off) or the index is not built yet. The watcher calls it each poll: the
        check runs once a head, outside Git's index lock, which only a commit takes."""
        head = self.store.head()
        if head is None or head == self._page_right_at or self.corpus.built() is None:
            return None
        if not self._page_behind(head):
            self._page_right_at = head
            return None
        try:
            return self.commit_change([], lambda view: {}, "contents page: INDEX.md matches the notes again", PAGE)
        except StoreError as exc:
            if "nothing to commit" not in str(exc):
                raise
            return None  # put right meanwhile; the next poll looks at the new head

    def _page_behind(self, sha: str) -> bool:
        """Whether commit `sha` holds an INDEX.md of Cortex's that does not list its notes."""
        page = self.store.blob_at(sha, CONTENTS_PAGE)
        if page is None or self.contents_policy == "off" or not self._page_is_ours(page):
            return False
        want = contents_page_after(self.corpus.peek(sha).notes, {}, False)
        return want != self.store.blob_bytes(page)

    def write(
        self,
        path: str,
        mode: WriteMode,
        actor: Actor,
        *,
        content: str | None = None,
        find: str | None = None,
        to: str | None = None,
        expected_blob: str | None = None,
        reason: str | None = None,
    ) -> WriteReply:
        """Apply one write mode to one note as exactly one commit."""
        req = write_request(path, mode, content, find, to, expected_blob, reason, self.stored_path)
        touched = [req.path] + ([req.target] if req.target else [])
        expect: list[str] = []
        if req.relinks and self.store.head():
            expect = self._linking(req.path, req.target)
            touched += expect  # their hand edits are committed first
        with self._writing():  # a hand `git commit` waits until the index follows
            self._before_write(touched)
            try:
                result, expect = self._commit_write(req, actor, expect)
            except AlreadyApplied as done:
                return self._replayed(done.sha, req.path, req.mode)
            self._sync_workdir(result, actor)
        return self._said_unwritten(write_reply(req, result, expect), result)

    def _commit_write(self, req: WriteRequest, actor: Actor, expect: list[str]) -> tuple[WriteResult, list[str]]:
        """The write's commit, and the notes whose links it rewrote (`expect`, as finally taken).

        A move names in its message the notes whose links it rewrote; its change refuses
        if those differ on the head it runs on (another writer added or removed a link
        meanwhile), and the list is taken again, up to MOVE_TRIES times in all.
        """
        attempt = 1
        while True:
            # Run again on a fresh head by the compare-and-swap, with this try's `expect`.
            change = partial(note_changes, req, expect=expect, relinked=self._relinked)
            try:
                return self._commit(change, f"{actor.tool}: {req.subject}", actor, write_body(req, expect)), expect
            except LinksMoved:
                if attempt == MOVE_TRIES:
                    raise
                attempt += 1
                expect = self._linking(req.path, req.target)
                self._before_write(expect)

    def rewrite(self, path: str, actor: Actor, subject: str, edit: Callable[[str | None], str]) -> dict[str, Any]:
        """One commit that sets `path` to `edit(its text at the head)` (None: no such file),
        applied again to a fresh head if another writer moved it meanwhile: a change made
        from what the file says now, never from what it said when a caller last read it."""
        return self.rewrite_files(actor, subject, {path: edit})

    def rewrite_files(
        self, actor: Actor, subject: str, edits: dict[str, Callable[[str | None], str]]
    ) -> dict[str, Any]:
        """`rewrite` of several files in one commit, each edit run in order on the same head.
        The reply names the first path; `blobs` has every file's new blob."""
        paths = {self.stored_path(check_path(p)): edit for p, edit in edits.items()}

        def change(view: View) -> Changes:
            out: Changes = {}
            for path, edit in paths.items():
                raw = view.read(path)
                text = strict_text(raw, path) if raw is not None else None
                out[path] = within_cap(edit(text).encode("utf-8"), path, "replace")
            return out

        with self._writing():
            self._before_write(list(paths))
            result = self._commit(change, subject, actor, "")
            self._sync_workdir(result, actor)
        first = next(iter(paths))
        reply: dict[str, Any] = {"sha": result.sha, "parent": result.parent, "path": first}
        reply["blob"] = result.new_blobs.get(first)
        if len(paths) > 1:
            reply["blobs"] = {p: result.new_blobs.get(p) for p in paths}
        reply.update(push_fields(result))
        return self._said_unwritten(reply, result)

    def _linking(self, path: str, target: str | None) -> list[str]:
        """The notes of the head whose text a move of `path` to `target` rewrites, sorted."""
        snap = self.snapshot()
        blob = snap.blobs.get(path)
        if blob is None or target is None:
            return []
        return sorted(self._relinked(snap.sha, path, target, self.store.blob_bytes(blob)))

    def _relinked(self, sha: str, path: str, target: str, moved: bytes) -> dict[str, bytes]:
        """New bytes of each note whose links a move of `path` to `target` must rewrite.

        The links to `path` come to name `target` (Obsidian's rename: only the link target
        text changes). And a link to another note that the new name would capture (a bare
        `[[Budget]]` that meant `private/Budget.md`, once `notes/Budget.md` exists), or a
        link of the moved note that its new folder would resolve elsewhere, is rewritten to
        the path of the note it meant: a move never changes where another link points. A
        note that is not valid UTF-8 is left alone (rewriting it could not keep its other
        bytes). Keys are the notes' paths before the move (`path` for the moved note).
        """
        snap = self.corpus.peek(sha)
        before, back = snap.link_map()
        # The moved note keeps its title and aliases (`own_names` reads them by its old path).
        after = LinkResolver({**{p: n for p, n in snap.notes.items() if p != path}, target: snap.notes[path]})
        new_name = link_key(_link_name(target))
        by_source: dict[str, dict[int, str]] = {}
        links_of: dict[str, list[Any]] = {}
        for meant, entries in back.items():
            for source, link in entries:
                if link.url is not None:  # a Markdown link: its url, relative to where its note now is
                    if path not in (meant, source):
                        continue
                    text = url_to(target if meant == path else meant, target if source == path else source, link.url)
                    if text == link.url:
                        continue
                elif meant == path:
                    how = before.find(link.target, source)
                    if how is not None and how[1] in ("alias", "title", "name"):
                        found = after.find(link.target, target if source == path else source)
                        if found is not None and found[0] == target:
                            continue  # it names the note by its title or an alias, which the move keeps
                    text = link_text(target, link.target, after)
                else:
                    bare = "/" not in link.target and link_key(_link_name(link.target)) == new_name
                    if not (bare or source == path):
                        continue
                    if after.resolve(link.target, target if source == path else source) == meant:
                        continue  # still points where it did
                    text = link_text(meant, link.target, after)
                if link.url is None:
                    _wikilink_can_say(text, source, target if meant == path else meant)
                by_source.setdefault(source, {})[link.start] = text
                links_of.setdefault(source, []).append(link)
        out: dict[str, bytes] = {}
        for source, replacement in sorted(by_source.items()):
            data = moved if source == path else self.store.blob_bytes(snap.blobs[source])
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                continue
            new = rewrite_links(text, snap.notes[source].body_offset, links_of[source], replacement)
            if new != text:  # a bare [[Name]] that still names the note needs no change
                out[source] = new.encode("utf-8")
        return out

    def _replayed(self, sha: str, path: str, mode: WriteMode) -> WriteReply:
        return {
            "sha": sha,
            "path": path,
            "mode": mode,
            "blob": self.store.blob_at(sha, path),
            "replayed": True,
            "note": f"this request_id was already applied in commit {sha}; nothing was written again",
        }

    def capture(self, text: str, actor: Actor, tags: list[str] | None = None) -> CaptureReply:
        """Append a `## HH:MM · tags` entry to today's log in the brain's time zone."""
        check_content(text)
        if not text.strip():
            raise BadInput("text is empty")
        clean_tags = []
        for tag in tags or []:
            check_text(tag, "tag")
            tag = " ".join(tag.replace(",", " ").split()).lstrip("#")
            if tag:
                clean_tags.append(tag)
        now = self.now()
        path = f"log/{now.date().isoformat()}.md"
        heading = f"## {now.strftime('%H:%M')}" + (f" · {', '.join(clean_tags)}" if clean_tags else "")
        entry = f"\n{heading}\n\n{text.strip()}\n"

        def change(view: View) -> Changes:
            existing = view.read(path)
            if existing is None:
                start = f"---\ntitle: Log {now.date().isoformat()}\ndecays: false\n---\n"
                return {path: (start + entry).encode("utf-8")}
            return {path: append_text(strict_text(existing, path), entry).encode("utf-8")}

        with self._writing():
            self._before_write([path])
            try:
                result = self._commit(change, f"{actor.tool}: append {path}", actor)
            except AlreadyApplied as done:
                r = self._replayed(done.sha, path, "append")
                return {
                    "sha": r["sha"],
                    "path": path,
                    "mode": "append",
                    "blob": r["blob"],
                    "replayed": True,
                    "note": r["note"],
                }
            self._sync_workdir(result, actor)
        reply: CaptureReply = {
            "sha": result.sha,
            "parent": result.parent,
            "path": path,
            "heading": heading,
            "blob": result.new_blobs.get(path),
            "replaced_blob": result.old_blobs.get(path),
        }
        if result.push:
            reply["push"] = result.push
            if result.push == "pending":
                reply["push_note"] = push_note(result)
        return self._said_unwritten(reply, result)

    def _page_is_ours(self, blob: str) -> bool:
        if blob not in self._own_page:
            self._own_page[blob] = is_generated_contents_page(self.store.blob_bytes(blob))
        return self._own_page[blob]

    def commit_change(
        self,
        paths: list[str],
        change: Callable[[View], Changes],
        subject: str,
        actor: Actor,
        body: str = "",
        *,
        sync: bool = True,
        author: Identity | None = None,
    ) -> WriteResult:
        """One commit (plus INDEX.md) whose files `change` computes from a View of the head.

        `change` runs inside the compare-and-swap and again whenever the head moved
        meanwhile, so what it reads and what it writes are always of the same head.
        `paths` are the files it may touch: their uncommitted hand edits are
        committed first. The working-tree watcher passes `sync=False` (its files are
        already on disk) and the owner as `author`.
        """
        with self._writing():
            if sync:
                self._before_write(paths)
            result = self._commit(change, subject, actor, body, author)
            if sync:
                self._sync_workdir(result, actor)
        return result

    def commit_files(
        self, changes: Changes, subject: str, actor: Actor, body: str = "", check: Callable[[View], None] | None = None
    ) -> WriteResult:
        """Commit several fixed files at once (a guest policy, a tombstone); `check` may refuse on the head."""

        def change(view: View) -> Changes:
            if check:
                check(view)
            return dict(changes)

        return self.commit_change(list(changes), change, subject, actor, body)

    def attach_workdir(self, hook: WorkdirHook) -> None:
        """The working-tree watcher: it commits hand edits before a write and syncs files after."""
        self.workdir_hook = hook

    def _before_write(self, paths: list[str]) -> None:
        """Commit uncommitted hand edits to `paths` first (their own commit, door editor)."""
        if self.workdir_hook is not None:
            self.workdir_hook.before_write(paths)

    def _said_unwritten(self, reply: R, result: WriteResult) -> R:
        """`reply` with `working_tree`: one line on the files of `result` the working tree could
        not take (a read-only folder), when there are any. The commit stands; the file is
        written when it can be."""
        failed = {p: why for p, why in self.store.unwritten.items() if p in result.new_blobs}
        if not failed:
            return reply
        named = ", ".join(f"{p} ({why})" for p, why in sorted(failed.items()))
        reply["working_tree"] = (
            f"committed, but the working tree could not take {named}: the file on disk is out of date "
            "until Cortex can write it (it retries; /healthz says so meanwhile). Make it writable; "
            "an edit to the old copy is merged keeping this write"
        )
        return reply

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """Git's index lock for one write, taken once no operation of the owner's is stopped
        midway in the working tree: a write made mid-rebase moved the branch, and the owner's
        `--abort` then took it back out (`--continue` could not finish). Waits up to
        `owner_git_wait` seconds, checking again under the lock, then refuses with nothing
        written."""
        deadline = time.monotonic() + self.owner_git_wait
        while True:
            # Looked at first without the lock: taking it every try failed the owner's own
            # `git add` and `git commit` that end the operation.
            operation = self.store.operation_under_way()
            if operation is None:
                try:
                    with self.store.staging_held():
                        operation = self.store.operation_under_way()
                        if operation is None:
                            yield
                            return
                finally:
                    if not self.store.holds_staging():  # released: the outermost write of this thread
                        self.journal.settle(self.store, self._unsettled.pop(threading.get_ident(), []))
            if time.monotonic() >= deadline:
                raise StoreError(
                    f"nothing was written: {operation} of yours is under way in the working tree, and Cortex "
                    f"does not move the branch under it; finish it (--continue) or --abort it, then try again"
                )
            time.sleep(0.1)

    def _sync_workdir(self, result: WriteResult, actor: Actor) -> None:
        """The working tree and Git's staging index brought to the write, and the write recorded
        in the journal, with the files the index could not take under Git's lock."""
        held = self.store.holds_staging()
        on_disk: Mapping[str, str | None] = {}  # what the disk holds, as the watcher just read or wrote it
        if self.workdir_hook is not None:  # the watcher syncs and tracks what disk holds
            on_disk = self.workdir_hook.after_write(result)
        elif self.store.workdir is not None:
            updates = {p: (None if b is None else self.store.blob_bytes(b)) for p, b in result.new_blobs.items()}
            expected = {p: (None if b is None else self.store.blob_bytes(b)) for p, b in result.old_blobs.items()}
            self.store.update_workdir(updates, expected)
        if self.store.workdir is not None:
            missed = set(result.new_blobs) if not held else set(self.store.unstaged())
            # A file the watcher just wrote or read is not read and hashed again (2 ms a write).
            off_disk = [
                p for p, b in result.new_blobs.items() if (on_disk[p] if p in on_disk else self.store.disk_blob(p)) != b
            ]
            generated = (CONTENTS_PAGE, ATTRIBUTES)
            # A write that makes a file is marked `owner_git` until Git's index lock is released and
            # no git command ran over it (`_writing`, `Journal.settle`): the watcher may look between.
            made = [p for p, b in result.new_blobs.items() if b and not result.old_blobs.get(p) and p not in generated]
            self.journal.record(
                result, tool=actor.tool, unstaged=missed, off_disk=off_disk, generated=generated, owner_git=bool(made)
            )
            if made:
                self._unsettled.setdefault(threading.get_ident(), []).append(result.sha)
