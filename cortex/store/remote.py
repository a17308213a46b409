"""Hosted mode: the brain lives on a Git remote; the server keeps a bare clone.

Every write fetches first, builds its commit on the fresh head and pushes it with
a compare-and-swap on the remote's branch (Git's non-fast-forward refusal). If
another writer got there first, it fetches and runs the one change again on the
new head: the same rule as a local compare-and-swap, so two servers sharing a
remote never lose a write and history stays linear. A push that fails for any
other reason (network, permissions) keeps the commit locally: the reply says
"push pending" and a background thread pushes it, replaying it on top of
whatever the remote gained meanwhile. The same thread fetches every few seconds
(and at once on a verified webhook) so edits made elsewhere are served.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cortex.errors import StoreError
from cortex.settings import Settings
from cortex.store.credentials import Auth
from cortex.store.git import GitStore, View
from cortex.store.network import checked_out
from cortex.store.types import Changes, Identity, WriteResult

if TYPE_CHECKING:  # starlette is imported where the route is made: the store runs without it
    from starlette.routing import Route

__all__ = [
    "LOCK_RETRIES",
    "MAX_HOOK_BYTES",
    "RemoteStore",
    "local_path",
    "open_hosted",
    "signature_ok",
    "webhook_route",
]

log = logging.getLogger(__name__)

# A push that meets a held ref lock is retried this many times before it counts as failed.
LOCK_RETRIES = 40


def local_path(url: str) -> str | None:
    """The folder of a local remote (a path or file:// URL); None for a network URL."""
    if url.startswith("file://"):
        return url[len("file://") :]
    if "://" in url or re.match(r"^[\w.-]+@[\w.-]+:", url):
        return None  # https://, ssh://, git@host:path
    return os.path.abspath(os.path.expanduser(url))


class RemoteStore(GitStore):
    """A bare clone whose every commit is pushed to its remote (`origin`)."""

    def __init__(self, path: str | Path, url: str, auth: Auth, branch: str | None = None, fetch_interval: float = 5.0):
        super().__init__(path, branch)
        self.url = url
        self.auth = auth
        self.local = local_path(url)
        self.fetch_interval = fetch_interval
        self._write_lock = threading.RLock()  # one writer (or fetch-and-integrate) at a time
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.last_fetch: float | None = None
        self.last_error: str | None = None

    @classmethod
    def open(
        cls, path: Path, url: str, auth: Auth, branch: str | None = None, fetch_interval: float = 5.0
    ) -> RemoteStore:
        """The clone at `path`, made from `url` on first use; StoreError for a local remote
        whose branch is checked out in a working tree (see `network.checked_out`)."""
        local = local_path(url)
        tree = checked_out(local, branch) if local is not None else None
        if tree is not None:
            raise StoreError(
                f"the remote {Auth.display(url)} has {'branch ' + branch if branch else 'its branch'} checked out "
                f"in the working tree {tree}: a push there would leave those files stale, and a server or editor on "
                f"them would commit them back over the pushed notes. Use a bare repository as the remote "
                f"(git clone --bare {tree} brain.git), or serve {tree} itself"
            )
        if not (path / "HEAD").exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            GitStore.clone(url, path, auth, branch)
        store = cls(path, url, auth, branch, fetch_interval)
        store.set_remote_url(url)
        store.sync()
        return store

    @property
    def display_url(self) -> str:
        return Auth.display(self.url)

    # -- writing ----------------------------------------------------------

    def commit(
        self, change: Callable[[View], Changes], message: str, max_retries: int = 50, author: Identity | None = None
    ) -> WriteResult:
        """Commit on the freshly fetched head and push; on a refusal fetch and re-apply."""
        with self._write_lock:
            self.sync()  # an unreachable remote is not an error here: the write becomes pending
            for attempt in range(max_retries + 1):
                draft = self.draft(change, message, author)
                expected = self.tracking_head()
                outcome = self._push(draft.sha, expected)
                if outcome == "behind":
                    self._integrate()
                    continue  # run the change again on the new head
                if not self.set_head(draft.parent, draft.sha, message):
                    continue  # cannot happen while we hold the write lock; be safe
                if outcome == "pushed":
                    self.last_error = None
                    return draft.result(attempt, push="pushed")
                self.last_error = outcome
                self._wake.set()
                return draft.result(attempt, push="pending", push_note=outcome.removeprefix("failed: "))
            raise StoreError(f"the remote kept moving; gave up after {max_retries} retries")

    def _push(self, sha: str, expected: str | None) -> str:
        """ "pushed", "behind" (the remote moved: re-apply) or "failed: …" (keep it pending)."""
        outcome = "locked"
        for _ in range(LOCK_RETRIES):
            outcome = self.push(sha, expected, self.auth, self.local)
            if outcome != "locked":
                break
            time.sleep(0.025)  # another pusher holds the remote's ref lock for a moment
        if outcome == "pushed":
            return outcome
        # Fetch the remote's new head for the retry. A network remote reports a
        # refusal as an error (or a rejected ref), so this also tells "someone
        # pushed first" from "the remote is unreachable".
        try:
            if self.fetch(self.auth) != expected:
                return "behind"
        except StoreError as exc:
            return f"failed: {exc}"
        if outcome == "behind":
            return "failed: the remote refused the push but its branch did not move"
        return outcome if outcome.startswith("failed") else "failed: the remote's branch stayed locked"

    # -- fetching ---------------------------------------------------------

    def sync(self) -> bool:
        """Fetch, then bring the local branch up to the remote's; False if the fetch failed."""
        with self._write_lock:
            try:
                self.fetch(self.auth)
            except StoreError as exc:
                self.last_error = str(exc)
                log.warning("%s", exc)
                return False
            self.last_fetch = time.time()
            self._integrate()
            return True

    def _integrate(self) -> None:
        """Fast-forward to the remote, or replay commits still waiting to be pushed on top of it."""
        with self._write_lock:
            local, origin = self.head(), self.tracking_head()
            if origin is None or local == origin:
                return
            if local is None or self.is_ancestor(local, origin):
                self.set_head(local, origin, "cortex: fetch")
                return
            if self.is_ancestor(origin, local):
                return  # only our pending commits are ahead
            base = self.merge_base(local, origin)
            tip = origin
            for sha in self.commits_between(base, local):
                tip = self.replay(sha, tip)
            self.set_head(local, tip, "cortex: replay pending commits on the remote's branch")

    def pending(self) -> int:
        """How many local commits the remote does not have yet."""
        head, origin = self.head(), self.tracking_head()
        if head is None or head == origin:
            return 0
        return len(self.commits_between(origin, head))

    def push_pending(self) -> bool:
        """Push commits kept locally; True when nothing is left pending."""
        with self._write_lock:
            for _ in range(10):
                head, origin = self.head(), self.tracking_head()
                if head is None or head == origin or (origin and self.is_ancestor(head, origin)):
                    return True
                outcome = self._push(head, origin)
                if outcome == "pushed":
                    self.last_error = None
                    log.info("pushed pending commits up to %s", head[:12])
                    return True
                if outcome != "behind":
                    self.last_error = outcome
                    return False
                self._integrate()
            return False

    # -- the background thread and the webhook ----------------------------

    def start(self) -> RemoteStore:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="cortex-remote", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def poke(self) -> None:
        """Fetch now (a verified webhook)."""
        self._wake.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(self.fetch_interval)
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                self.sync()
                if self.pending():
                    self.push_pending()
            except Exception as exc:  # keep the thread alive; report in /healthz
                self.last_error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                log.warning("remote sync failed: %s", self.last_error)

    def status(self) -> dict[str, Any]:
        return {
            "remote": {
                "url": self.display_url,
                "pending": self.pending(),
                "last_fetch": self.last_fetch,
                "last_error": self.last_error,
            }
        }


def signature_ok(secret: str, body: bytes, header: str | None) -> bool:
    """GitHub's `X-Hub-Signature-256: sha256=<hex>` over the raw body, compared in constant time."""
    if not header or not header.startswith("sha256="):
        return False
    want = hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(
        want.encode("ascii"), header[len("sha256=") :].strip().lower().encode("ascii", "replace")
    )


MAX_HOOK_BYTES = 1_048_576  # a push event from GitHub is a few KB; 1 MiB is far above any real one


def webhook_route(store: RemoteStore | None, secret: str | None) -> Route:
    """`POST /hooks/push`: 404 without a secret (or remote), 401 on a bad signature, 202 and a fetch otherwise."""
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    async def hook(request: Request) -> Response:
        if not secret or store is None:
            return Response("Not Found", status_code=404)
        # Capped before reading: the route is public, and the signature can only be
        # checked once the body is in memory (a 48 MiB unsigned body cost 50 MB).
        length = request.headers.get("content-length", "")
        if length.isdigit() and int(length) > MAX_HOOK_BYTES:
            return Response(f"Payload Too Large: the limit is {MAX_HOOK_BYTES} bytes", status_code=413)
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_HOOK_BYTES:
                return Response(f"Payload Too Large: the limit is {MAX_HOOK_BYTES} bytes", status_code=413)
        if not signature_ok(secret, bytes(body), request.headers.get("x-hub-signature-256")):
            return Response("Unauthorized: bad or missing X-Hub-Signature-256", status_code=401)
        store.poke()
        return JSONResponse({"ok": True, "fetch": "scheduled"}, status_code=202)

    return Route("/hooks/push", hook, methods=["POST"])


def open_hosted(settings: Settings) -> RemoteStore:
    """The hosted brain's clone, `$CORTEX_HOME/remote-clone.git`, cloned from CORTEX_REMOTE on first run.

    An empty remote gives an empty clone; `brains.open_brain` seeds it.
    """
    if settings.remote is None:
        raise StoreError("no CORTEX_REMOTE is set: a hosted brain needs the remote to clone")
    path = settings.served_repository()
    auth = Auth(settings.remote_token, settings.remote_user)
    store = RemoteStore.open(path, settings.remote, auth, settings.branch, fetch_interval=settings.fetch_interval)
    settings.brain = path
    return store
