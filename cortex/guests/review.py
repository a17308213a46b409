"""The owner's review of guest proposals: list, accept (one commit), reject (a tombstone).

Git is the record: an accepted proposal is one commit holding the note change
and its receipt `.cortex/receipts/<id>.json`; a rejection is a commit holding
its tombstone `.cortex/tombstones/<key>.json` (also copied into Redis), so a
rejected proposal stays refused after Redis loses its data. The receipt also
makes accept idempotent: a retry, or a retry after a crash between the commit
and the queue update, finds the receipt in the head and returns that commit.
"""

from __future__ import annotations

import difflib
import json
from typing import Any

from cortex.brain.brain import Brain
from cortex.brain.text_rules import append_text, strict_text, within_cap
from cortex.brain.trailers import Actor
from cortex.errors import BadInput, StoreError
from cortex.guests.queue import Proposal, ProposalQueue, tomb_key
from cortex.notes.data_envelope import DATA_NOTICE, fence, new_nonce
from cortex.notes.paths import MAX_CONTENT_BYTES, check_path, check_text
from cortex.store.git import View

__all__ = ["LIST_BODY_CHARS", "MAX_REASON_CHARS", "RECEIPTS", "Review", "TOMBSTONES", "apply_mode", "receipt_path"]

RECEIPTS = ".cortex/receipts/"
TOMBSTONES = ".cortex/tombstones/"
MAX_REASON_CHARS = 500
# A listing shows each body and diff up to this many characters; brain_proposals(id)
# shows one proposal whole. 50 proposals x 8 KB x 2 keeps a listing near 800 KB at worst.
LIST_BODY_CHARS = 8_000


class _Receipted(Exception):
    """The proposal's receipt is already in the head: an earlier accept committed it."""


def receipt_path(pid: str) -> str:
    return f"{RECEIPTS}{pid}.json"


def apply_mode(mode: str, path: str, current: str | None, content: str) -> str:
    """The note text after applying a proposal; BadInput when the mode cannot apply."""
    if mode == "create":
        if current is not None:
            raise BadInput(
                f"{path} already exists; a create proposal cannot overwrite it "
                "(the proposal stays pending: reject it, or edit the note by hand)"
            )
        return content
    if mode == "replace":
        if current is None:
            raise BadInput(f"no note at {path}; a replace proposal needs an existing note (it stays pending)")
        return content
    if mode == "append":
        return append_text(current or "", content)
    raise BadInput(f"unknown proposal mode {mode!r}")


def _clip(text: str, limit: int) -> tuple[str, int]:
    if len(text) <= limit:
        return text, 0
    return text[:limit], len(text) - limit


class Review:
    """The owner's side of the queue. `queue` is None when the guest door is disabled."""

    def __init__(self, brain: Brain, queue: ProposalQueue | None, disabled: str | None = None):
        self.brain = brain
        self.queue = queue
        self.disabled = disabled
        if queue is not None:
            queue.tombstones = self.git_tombstones

    def _q(self) -> ProposalQueue:
        if self.queue is None:
            raise StoreError(
                f"the proposal queue is {self.disabled or 'disabled'}; set REDIS_URL or install redis-server"
            )
        return self.queue

    def git_tombstones(self) -> dict[str, str]:
        """Every tombstone kept in Git at the head, as Redis stores them (key -> JSON)."""
        out: dict[str, str] = {}
        for path, data in self.brain.files_under(TOMBSTONES, self.brain.head()).items():
            if not path.endswith(".json"):
                continue
            try:
                tomb = json.loads(data)
                out[tomb_key(tomb["path"], tomb["digest"])] = json.dumps(tomb, sort_keys=True)
            except (ValueError, KeyError, TypeError):
                continue  # a hand-damaged tombstone refuses nothing; it never blocks the rest
        return out

    # -- listing ----------------------------------------------------------

    def proposals(self, pid: str | None = None) -> dict[str, Any]:
        """Open proposals, oldest first: each body fenced with this reply's nonce, and a diff."""
        q = self._q()
        nonce = new_nonce()
        snap_sha = self.brain.head()
        items = q.open()
        if pid is not None:
            check_text(pid, "id")
            items = [p for p in items if p.id == pid]
            if not items:
                raise BadInput(f"no open proposal {pid}")
        limit = MAX_CONTENT_BYTES * 2 if pid else LIST_BODY_CHARS
        out = [self._show(p, snap_sha, nonce, limit) for p in items]
        reply: dict[str, Any] = {
            "sha": snap_sha,
            "notice": DATA_NOTICE,
            "nonce": nonce,
            "count": len(out),
            "cap": q.cap,
            "proposals": out,
        }
        if any("clipped" in p for p in out):
            reply["more"] = "some bodies or diffs are clipped; call brain_proposals(id=...) to see one whole"
        return reply

    def preview(self, p: Proposal, head: str | None) -> tuple[str | None, str, str | None]:
        """(the note at `head`, the note after accepting, why it cannot apply or None).

        A proposal whose path would replace a folder or nest under a note shows as
        not applicable, so the review never calls it a "new note" while accepting
        would delete others.
        """
        current = self.brain.text_at(head, p.path)
        try:
            after = apply_mode(p.mode, p.path, current, p.content)
        except BadInput as exc:
            return current, p.content, str(exc)
        return current, after, self.brain.collision(p.path, head)

    def _show(self, p: Proposal, head: str | None, nonce: str, limit: int) -> dict[str, Any]:
        current, after, applies = self.preview(p, head)
        diff = "".join(
            difflib.unified_diff(
                (current or "").splitlines(keepends=True),
                after.splitlines(keepends=True),
                fromfile=f"a/{p.path}" if current is not None else "/dev/null",
                tofile=f"b/{p.path}",
            )
        )
        body, body_more = _clip(p.content, limit)
        diff, diff_more = _clip(diff, limit)
        item: dict[str, Any] = {
            "id": p.id,
            "state": p.state,
            "guest": p.guest,
            "path": p.path,
            "mode": p.mode,
            "created": p.created_iso(),
            "digest": p.digest,
            "exists": current is not None,
            "why": fence(f"why {p.id}", p.why, nonce) if p.why else "",
            "body": fence(f"proposal {p.id} body", body, nonce),
            "diff": fence(f"proposal {p.id} diff against {(head or '')[:12]}", diff, nonce),
        }
        if applies:
            item["cannot_apply"] = applies
        if body_more or diff_more:
            item["clipped"] = f"body: {body_more} more chars; diff: {diff_more} more chars"
        if p.state == "accepting":
            item["note"] = "an accept was interrupted; call brain_accept again to finish it"
        return item

    # -- accepting --------------------------------------------------------

    def accept(self, actor: Actor, pid: str) -> dict[str, Any]:
        """One commit (note + receipt); a retry returns the same commit, never a second."""
        q = self._q()
        check_text(pid, "id")
        verdict = q.begin_accept(pid)
        p = q.get(pid)
        if verdict == "missing" or p is None:
            raise BadInput(f"no proposal {pid} (unknown, or decided more than 30 days ago)")
        if verdict == "committed":
            return self._accepted(p, p.extra.get("commit", ""), p.extra.get("parent"), retried=True)
        if verdict not in ("go", "resume"):
            extra = f": {p.extra['reason']}" if verdict == "rejected" and p.extra.get("reason") else ""
            raise BadInput(f"proposal {pid} is {verdict}{extra}; it cannot be accepted")
        try:
            sha, parent, retried = self._commit(actor, p)
        except (BadInput, StoreError):
            # Refused (e.g. create on an existing note): nothing committed; back to pending.
            q.move(pid, "accepting", "pending")
            raise
        q.move(pid, "accepting", "committed", commit=sha, parent=parent or "")
        return self._accepted(p, sha, parent, retried=retried)

    def _commit(self, actor: Actor, p: Proposal) -> tuple[str, str | None, bool]:
        """(commit sha, parent, found_existing): the note and its receipt, computed on the head.

        Computed inside the store's compare-and-swap, so a moved head re-runs it: the
        diff and the receipt's parent are always of the head the commit lands on. A
        receipt already there means an earlier accept committed (a retry): its commit.
        """
        rpath = receipt_path(p.id)
        path = check_path(p.path)

        def change(view: View) -> dict[str, bytes | None]:
            if view.blob_of(rpath) is not None:
                raise _Receipted()
            current = view.read(path)
            new_text = apply_mode(p.mode, path, strict_text(current, path) if current is not None else None, p.content)
            receipt = {
                "proposal": p.id,
                "guest": p.guest,
                "path": path,
                "mode": p.mode,
                "digest": p.digest,
                "parent": view.sha,
            }
            return {
                path: within_cap(new_text.encode("utf-8"), path, f"accept ({p.mode})"),
                rpath: (json.dumps(receipt, indent=2, sort_keys=True) + "\n").encode("utf-8"),
            }

        body = f"Proposal: {p.id}\nGuest: {p.guest}\nContent-Digest: sha256:{p.digest}"
        try:
            result = self.brain.commit_change(
                [path, rpath], change, f"{actor.tool}: {p.mode} {path} (proposal {p.id})", actor, body
            )
        except _Receipted:
            return (*self._receipt_commit(rpath), True)
        return result.sha, result.parent, False

    def _receipt_commit(self, rpath: str) -> tuple[str, str | None]:
        """The commit that added a receipt (receipts are never changed after)."""
        commits, _ = self.brain.history(rpath, limit=1)
        if not commits:
            raise StoreError(f"{rpath} is in the head but no commit adds it")
        c = commits[0]
        return c.sha, (c.parents[0] if c.parents else None)

    @staticmethod
    def _accepted(p: Proposal, sha: str, parent: str | None, retried: bool) -> dict[str, Any]:
        reply = {
            "id": p.id,
            "state": "committed",
            "sha": sha,
            "parent": parent,
            "path": p.path,
            "mode": p.mode,
            "guest": p.guest,
            "receipt": receipt_path(p.id),
        }
        if retried:
            reply["note"] = "already accepted: this is the original commit; nothing new was committed"
        return reply

    # -- rejecting --------------------------------------------------------

    def reject(self, actor: Actor, pid: str, reason: str) -> dict[str, Any]:
        """pending -> rejected, a tombstone in Redis and in Git (one commit). Retry-safe."""
        q = self._q()
        check_text(pid, "id")
        check_text(reason, "reason")
        reason = " ".join(reason.split())
        if not reason:
            raise BadInput("a rejection needs a reason; the guest sees it if they send the same proposal again")
        if len(reason) > MAX_REASON_CHARS:
            raise BadInput(f"reason is longer than {MAX_REASON_CHARS} characters")
        p = q.get(pid)
        if p is None:
            raise BadInput(f"no proposal {pid} (unknown, or decided more than 30 days ago)")
        tomb = {
            "path": p.path,
            "digest": p.digest,
            "reason": reason,
            "guest": p.guest,
            "time": self.brain.now().isoformat(timespec="seconds"),
            "proposal": p.id,
        }
        verdict = q.reject(pid, reason, tomb)
        if verdict == "rejected":
            p = q.get(pid) or p
            if p.extra.get("tomb_commit"):
                return self._rejected(p, p.extra.get("reason", reason), p.extra["tomb_commit"], retried=True)
            reason = p.extra.get("reason", reason)
            tomb["reason"] = reason
        elif verdict == "accepting":
            raise BadInput(f"proposal {pid} is being accepted; call brain_accept({pid}) to finish it first")
        elif verdict != "ok":
            raise BadInput(f"proposal {pid} is {verdict}; it cannot be rejected")
        # Redis first (the state change is atomic there), then Git; a crash between the
        # two is mended by rejecting again, which lands here with verdict 'rejected'.
        sha = self._commit_tombstone(actor, tomb)
        q.set_fields(pid, tomb_commit=sha)
        return self._rejected(p, reason, sha, retried=verdict == "rejected")

    def _commit_tombstone(self, actor: Actor, tomb: dict[str, Any]) -> str:
        tpath = f"{TOMBSTONES}{tomb_key(tomb['path'], tomb['digest'])}.json"
        data = (json.dumps(tomb, indent=2, sort_keys=True) + "\n").encode("utf-8")
        if self.brain.text_at(self.brain.head(), tpath) == data.decode("utf-8"):
            commits, _ = self.brain.history(tpath, limit=1)
            return commits[0].sha
        result = self.brain.commit_files(
            {tpath: data},
            f"{actor.tool}: reject proposal {tomb['proposal']} for {tomb['path']}",
            actor,
            body=f"Proposal: {tomb['proposal']}\nGuest: {tomb['guest']}\nReason: {tomb['reason']}",
        )
        return result.sha

    @staticmethod
    def _rejected(p: Proposal, reason: str, sha: str, retried: bool) -> dict[str, Any]:
        reply = {
            "id": p.id,
            "state": "rejected",
            "path": p.path,
            "guest": p.guest,
            "reason": reason,
            "tombstone_sha": sha,
        }
        if retried:
            reply["note"] = "already rejected; the tombstone is in Git"
        return reply
