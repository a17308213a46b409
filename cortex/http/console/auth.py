"""The console's sign-in: signed session cookies, CSRF tokens and a sign-in throttle.

- A session is a signed cookie (itsdangerous, HMAC-SHA256 with a key kept in the state
  folder), carrying a random session id, its signing time and a fingerprint of the credentials
  it was signed in with: changing the owner token or the passcode signs every
  session out. No server-side session store, so a restart keeps the owner
  signed in. Sign-out moves a session epoch kept in the state folder, so it
  signs out every session (there is one owner) and survives a restart, which
  an in-memory revocation list did not.
- The CSRF token is derived from the session id with the same key; the sign-in
  form, which has no session yet, gets its own from a short-lived signed
  "pre-session" cookie.
- Failed sign-ins are counted in memory (per process), twice: per client address
  (five inside five minutes, then 429 for that address) and across all addresses
  (twenty inside an hour, then passcode sign-in waits for everyone), so no choice
  of address gets around the limit on guessing a short CORTEX_CONSOLE_PASSCODE.
  The client address is the socket's unless CORTEX_TRUSTED_PROXIES names the proxy.
  A correct owner token always signs in, throttled or not: it is 256 random bits,
  so a lock could only hurt its owner. A restart forgets the counts.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from itsdangerous import BadData, TimestampSigner, URLSafeTimedSerializer
from itsdangerous import Signer as KeyedSigner

from cortex.files import write_atomic

__all__ = [
    "ALL",
    "FAILURE_WINDOW_ALL",
    "MAX_FAILURES_ALL",
    "PRE_SECONDS",
    "SESSION_SECONDS",
    "Session",
    "Sessions",
    "Signer",
    "Throttle",
    "credential_ok",
    "token_matches",
]

SESSION_SECONDS = 12 * 3600
PRE_SECONDS = 3600  # a sign-in form stays usable this long
MAX_FAILURES = 5  # failures allowed per address inside the window
FAILURE_WINDOW = 300.0  # seconds
# Across every address: 20 guesses an hour is ~175,000 a year, against a
# passcode the README asks to be at least a few words long.
MAX_FAILURES_ALL = 20
FAILURE_WINDOW_ALL = 3600.0
ALL = "*"  # the key under which every failure is also counted
MAX_TRACKED = 10_000  # addresses remembered at once; the oldest go first


MAX_TOKEN_CHARS = 4096  # a longer cookie is refused unread


class ClockedSigner(TimestampSigner):
    """itsdangerous's TimestampSigner on a given clock (a test's, or the wall clock)."""

    def __init__(self, *args: Any, clock: Callable[[], float] = time.time, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.clock = clock

    def get_timestamp(self) -> int:
        return int(self.clock())


class Signer:
    """Signed, timed, URL-safe tokens holding a small JSON payload, and keyed digests
    (itsdangerous, HMAC-SHA256); `purpose` is the salt, so one token never serves another."""

    def __init__(self, key: str):
        self._key = key

    def mac(self, purpose: str, value: str) -> str:
        """A keyed digest of `value` for one purpose."""
        return KeyedSigner(self._key, salt=purpose, digest_method=hashlib.sha256).get_signature(value).decode()

    def _serializer(self, purpose: str, clock: Callable[[], float]) -> URLSafeTimedSerializer:
        kwargs = {"digest_method": hashlib.sha256, "clock": clock}
        return URLSafeTimedSerializer(self._key, salt=purpose, signer=ClockedSigner, signer_kwargs=kwargs)

    def sign(self, purpose: str, payload: dict[str, Any], clock: Callable[[], float] = time.time) -> str:
        """A token holding `payload`, signed now by `clock`."""
        return self._serializer(purpose, clock).dumps(payload)

    def unsign(
        self, purpose: str, token: str | None, max_age: int, clock: Callable[[], float] = time.time
    ) -> tuple[dict[str, Any], int] | None:
        """(payload, expiry time) while `token` is under `max_age` seconds old by `clock`;
        None when it is missing, forged, malformed or expired."""
        if not token or len(token) > MAX_TOKEN_CHARS:
            return None
        try:
            payload, signed = self._serializer(purpose, clock).loads(token, max_age=max_age, return_timestamp=True)
        except BadData:
            return None
        expires = int(signed.timestamp()) + max_age
        if not isinstance(payload, dict) or expires <= clock():
            return None
        return payload, expires


@dataclass(frozen=True)
class Session:
    sid: str
    expires: int
    csrf: str


class Sessions:
    """Signed session cookies bound to the current credentials, and sign-out."""

    def __init__(
        self,
        signer: Signer,
        credentials: list[str],
        clock: Callable[[], float] = time.time,
        epoch_file: Path | None = None,
    ):
        self.signer = signer
        self.clock = clock
        # Sessions die when the owner token or passcode changes.
        self._cred = signer.mac("cred", "\0".join(credentials))[:22]
        self._epoch_file = epoch_file
        self._epoch = 0  # without a file (tests): kept in memory
        self._lock = threading.Lock()

    def epoch(self) -> int:
        """The current epoch; a session signed in an earlier one is signed out."""
        if self._epoch_file is None:
            return self._epoch
        try:
            return int(self._epoch_file.read_text().strip() or 0)
        except (OSError, ValueError):
            return 0

    def csrf_for(self, sid: str) -> str:
        return self.signer.mac("csrf", sid)

    def new(self) -> tuple[Session, str]:
        """A fresh session and its cookie value."""
        sid = secrets.token_urlsafe(18)
        expires = int(self.clock()) + SESSION_SECONDS
        cookie = self.signer.sign("session", {"sid": sid, "cred": self._cred, "ep": self.epoch()}, self.clock)
        return Session(sid, expires, self.csrf_for(sid)), cookie

    def read(self, cookie: str | None) -> Session | None:
        found = self.signer.unsign("session", cookie, SESSION_SECONDS, self.clock)
        if found is None:
            return None
        payload, expires = found
        sid = payload.get("sid")
        if not isinstance(sid, str):
            return None
        if not hmac.compare_digest(str(payload.get("cred", "")).encode(), self._cred.encode()):
            return None
        if payload.get("ep") != self.epoch():
            return None
        return Session(sid, expires, self.csrf_for(sid))

    def revoke(self, session: Session) -> None:
        """Sign out: every session of the current epoch ends, across restarts and processes."""
        with self._lock:
            following = self.epoch() + 1
            if self._epoch_file is None:
                self._epoch = following
                return
            write_atomic(self._epoch_file, f"{following}\n".encode())

    # -- the sign-in form's own CSRF token ---------------------------------

    def new_pre(self) -> tuple[str, str]:
        """(cookie value, form token) for a sign-in form."""
        nonce = secrets.token_urlsafe(18)
        cookie = self.signer.sign("pre", {"n": nonce}, self.clock)
        return cookie, self.signer.mac("pre-csrf", nonce)

    def pre_token(self, cookie: str | None) -> str | None:
        """The form token the pre-session cookie expects, or None when it is missing or stale."""
        found = self.signer.unsign("pre", cookie, PRE_SECONDS, self.clock)
        if found is None or not isinstance(found[0].get("n"), str):
            return None
        return self.signer.mac("pre-csrf", found[0]["n"])


def token_matches(given: str | None, expected: str | None) -> bool:
    """Constant-time comparison; a missing value on either side never matches."""
    if not given or not expected:
        return False
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


def credential_ok(given: str, owner_token: str, passcode: str | None) -> bool:
    """The owner token or the passcode. Both are compared every time, in constant time each."""
    ok_token = token_matches(given, owner_token)
    ok_pass = token_matches(given, passcode)
    return ok_token | ok_pass


class Throttle:
    """Events per client address, in memory: at most `max_failures` per `window` (failed
    sign-ins, MAX_FAILURES per FAILURE_WINDOW; the OAuth door counts registrations with it)."""

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        max_failures: int = MAX_FAILURES,
        window: float = FAILURE_WINDOW,
    ):
        self.clock = clock
        self.max_failures = max_failures
        self.window = window
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    def _recent(self, addr: str, now: float) -> deque[float]:
        times = self._failures.get(addr) or deque()
        while times and times[0] <= now - self.window:
            times.popleft()
        return times

    def retry_after(self, addr: str) -> int | None:
        """Seconds until `addr` may try again, or None when it may try now."""
        now = self.clock()
        with self._lock:
            times = self._recent(addr, now)
            if len(times) < self.max_failures:
                return None
            return max(1, int(times[0] + self.window - now) + 1)

    def fail(self, addr: str) -> None:
        now = self.clock()
        with self._lock:
            times = self._recent(addr, now)
            times.append(now)
            self._failures[addr] = times
            self._failures.move_to_end(addr)
            while len(self._failures) > MAX_TRACKED:
                self._failures.popitem(last=False)

    def clear(self, addr: str) -> None:
        with self._lock:
            self._failures.pop(addr, None)
