"""Named guests: policies in the brain's Git, secrets only as hashes.

A guest's policy lives at `.cortex/guests/<name>.json`, committed like any
change, so the owner can read, diff and audit who may ask what. The secret is
printed once by `cortex guest add`; Git holds only its SHA-256.

A policy that fails to parse or validate closes that guest's door (its secret
matches nothing) and is reported to the owner; it never falls back to a
default scope.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import threading
from dataclasses import asdict, dataclass
from typing import Any

from cortex.brain.brain import Brain
from cortex.brain.trailers import Actor
from cortex.errors import BadInput, Conflict
from cortex.notes.paths import check_path, in_scope, is_note_path
from cortex.notes.working import FOLDER as WORKING
from cortex.settings import GUEST_DEFAULTS, GUEST_SHARE, QUEUE_CAP
from cortex.store.git import View

__all__ = [
    "DEFAULTS",
    "FIELDS",
    "GUEST_DIR",
    "GuestBook",
    "GuestPolicy",
    "MAX_DAILY",
    "MAX_K",
    "OPTIONAL",
    "PolicyError",
    "add_guest",
    "check_name",
    "check_scope",
    "hash_secret",
    "parse_policy",
    "revoke_guest",
    "unmatched_scopes",
]

GUEST_DIR = ".cortex/guests/"
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
MAX_K = 20  # the ask tool's own cap
MAX_DAILY = 100_000
DEFAULTS = GUEST_DEFAULTS
FIELDS = (
    "name",
    "scopes",
    "max_k",
    "daily_asks",
    "daily_proposals",
    "citations",
    "created",
    "secret_sha256",
    "max_pending",
)
# Fields added after policies were first written: a policy without one gets the default.
OPTIONAL = {"max_pending"}


class PolicyError(BadInput):
    """A policy that cannot be used; its guest's door stays closed."""


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def check_name(name: Any) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise PolicyError("guest name must be 1-40 of a-z, 0-9, '-', '_', starting with a letter or digit")
    return name


def check_scope(scope: Any) -> str:
    """An exact note path, or a folder prefix ending in '/'. Never the whole brain."""
    if not isinstance(scope, str) or not scope:
        raise PolicyError("a scope must be a non-empty string")
    try:
        if scope.endswith("/"):
            if scope == "/":
                raise PolicyError("scope '/' would be the whole brain; name folders instead")
            # The prefix must be made of the same safe segments a note path is.
            check_path(scope + "x.md")
        else:
            check_path(scope)
    except PolicyError:
        raise
    except BadInput as exc:
        raise PolicyError(f"scope {scope!r} is not a note path or a folder ending in '/': {exc}") from None
    if scope.startswith("archive/") or scope == "archive/":
        raise PolicyError("archive/ is excluded from every corpus read; it cannot be a guest scope")
    if scope.lower().startswith(WORKING):
        raise PolicyError(f"{WORKING} holds the owner's working state, which no guest sees; it cannot be a guest scope")
    return scope


def _check_int(value: Any, what: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise PolicyError(f"{what} must be a whole number from {low} to {high}")
    return value


@dataclass(frozen=True)
class GuestPolicy:
    name: str
    scopes: tuple[str, ...]
    max_k: int
    daily_asks: int
    daily_proposals: int
    citations: bool
    created: str
    secret_sha256: str
    max_pending: int = GUEST_SHARE  # open proposals at once, inside the queue's global cap

    @property
    def path(self) -> str:
        return f"{GUEST_DIR}{self.name}.json"

    def to_json(self) -> bytes:
        data = asdict(self)
        data["scopes"] = list(self.scopes)
        return (json.dumps(data, indent=2, sort_keys=False) + "\n").encode("utf-8")

    @classmethod
    def validate(cls, data: Any, expected_name: str | None = None) -> GuestPolicy:
        """A policy from parsed JSON, checked strictly: unknown or missing keys are errors."""
        if not isinstance(data, dict):
            raise PolicyError("policy must be a JSON object")
        missing = [f for f in FIELDS if f not in data and f not in OPTIONAL]
        unknown = sorted(set(data) - set(FIELDS))
        if missing or unknown:
            raise PolicyError(
                "policy "
                + "; ".join(
                    ([f"is missing {', '.join(missing)}"] if missing else [])
                    + ([f"has unknown keys {', '.join(unknown)}"] if unknown else [])
                )
            )
        name = check_name(data["name"])
        if expected_name is not None and name != expected_name:
            raise PolicyError(f"policy name {name!r} does not match its file name {expected_name!r}")
        scopes = data["scopes"]
        if not isinstance(scopes, list) or not scopes:
            raise PolicyError("scopes must be a non-empty list")
        if not isinstance(data["citations"], bool):
            raise PolicyError("citations must be true or false")
        if not isinstance(data["created"], str):
            raise PolicyError("created must be an ISO-8601 time")
        if not isinstance(data["secret_sha256"], str) or not _HEX64.match(data["secret_sha256"]):
            raise PolicyError("secret_sha256 must be 64 lowercase hex digits")
        return cls(
            name=name,
            scopes=tuple(check_scope(s) for s in scopes),
            max_k=_check_int(data["max_k"], "max_k", 1, MAX_K),
            daily_asks=_check_int(data["daily_asks"], "daily_asks", 0, MAX_DAILY),
            daily_proposals=_check_int(data["daily_proposals"], "daily_proposals", 0, MAX_DAILY),
            citations=data["citations"],
            created=data["created"],
            secret_sha256=data["secret_sha256"],
            max_pending=_check_int(data.get("max_pending", DEFAULTS["max_pending"]), "max_pending", 1, QUEUE_CAP),
        )

    def public(self) -> dict[str, Any]:
        """What `cortex guest list` shows: everything but the hash."""
        return {
            "name": self.name,
            "scopes": list(self.scopes),
            "max_k": self.max_k,
            "daily_asks": self.daily_asks,
            "daily_proposals": self.daily_proposals,
            "max_pending": self.max_pending,
            "citations": self.citations,
            "created": self.created,
        }


def parse_policy(path: str, data: bytes) -> GuestPolicy:
    """The policy in file `path`, or PolicyError saying why it is unusable."""
    stem = path[len(GUEST_DIR) :]
    if "/" in stem or not stem.endswith(".json"):
        raise PolicyError("not a policy file: policies are .cortex/guests/<name>.json")
    try:
        parsed = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PolicyError(f"not valid JSON: {exc}") from None
    return GuestPolicy.validate(parsed, expected_name=stem[: -len(".json")])


class GuestBook:
    """The guest policies at the brain's head, re-read whenever the head moves."""

    def __init__(self, brain: Brain):
        self.brain = brain
        self._lock = threading.Lock()
        self._sha: str | None = None
        self._policies: dict[str, GuestPolicy] = {}
        self._broken: list[dict[str, str]] = []

    def _load(self) -> tuple[dict[str, GuestPolicy], list[dict[str, str]]]:
        head = self.brain.head()
        with self._lock:
            if head == self._sha:
                return self._policies, self._broken
            policies: dict[str, GuestPolicy] = {}
            broken: list[dict[str, str]] = []
            for path, data in self.brain.files_under(GUEST_DIR, head).items():  # once per head change
                try:
                    policy = parse_policy(path, data)
                except PolicyError as exc:
                    broken.append({"file": path, "error": str(exc)})
                    continue
                policies[policy.name] = policy
            self._sha, self._policies, self._broken = head, policies, broken
            return policies, broken

    def policies(self) -> dict[str, GuestPolicy]:
        return dict(self._load()[0])

    def broken(self) -> list[dict[str, str]]:
        return list(self._load()[1])

    def get(self, name: str) -> GuestPolicy | None:
        return self._load()[0].get(name)

    def find(self, secret: str) -> GuestPolicy | None:
        """The guest whose secret this is; every policy is compared, in constant time each."""
        digest = hash_secret(secret)
        found = None
        for policy in self._load()[0].values():
            if hmac.compare_digest(digest, policy.secret_sha256):
                found = policy
        return found


def add_guest(
    brain: Brain,
    name: str,
    scopes: list[str],
    *,
    max_k: int | None = None,
    daily_asks: int | None = None,
    daily_proposals: int | None = None,
    citations: bool = False,
    max_pending: int | None = None,
) -> tuple[GuestPolicy, str, str]:
    """Commit a new guest's policy; (policy, secret, commit SHA). The secret is not stored."""
    secret = secrets.token_urlsafe(32)
    policy = GuestPolicy.validate(
        {
            "name": name,
            "scopes": list(dict.fromkeys(scopes)),
            "max_k": DEFAULTS["max_k"] if max_k is None else max_k,
            "daily_asks": DEFAULTS["daily_asks"] if daily_asks is None else daily_asks,
            "daily_proposals": DEFAULTS["daily_proposals"] if daily_proposals is None else daily_proposals,
            "max_pending": DEFAULTS["max_pending"] if max_pending is None else max_pending,
            "citations": citations,
            "created": brain.now().isoformat(timespec="seconds"),
            "secret_sha256": hash_secret(secret),
        }
    )

    def absent(view: View) -> None:
        if view.blob_of(policy.path) is not None:
            raise Conflict(f"guest {name!r} already exists; revoke it first or choose another name")

    result = brain.commit_files(
        {policy.path: policy.to_json()},
        f"guest add: {name}",
        Actor(door="cli", tool="guest add"),
        body=f"Scopes: {', '.join(policy.scopes)}",
        check=absent,
    )
    return policy, secret, result.sha


def unmatched_scopes(brain: Brain, scopes: list[str] | tuple[str, ...], sha: str | None) -> list[str]:
    """A warning for each scope that no note at commit `sha` falls in, with the spelling
    meant when only letter case differs. Not refused: a guest may propose the first note of a
    folder, but until one is there its asks find nothing."""
    notes = [p for p in (brain.files(sha) if sha else {}) if is_note_path(p)]
    folded = {p.lower(): p for p in notes}
    warnings = []
    for scope in scopes:
        if any(in_scope(p, [scope]) for p in notes):
            continue
        near = ""
        low = scope.lower()
        if low in folded:
            near = f"; did you mean {folded[low]}?"
        else:
            cased = next((p for p in sorted(folded) if p.startswith(low)), None) if low.endswith("/") else None
            if cased is not None:
                near = f"; did you mean {folded[cased][: len(scope)]}?"
        at = f"the head ({sha[:12]})" if sha else "the head (the brain has no commits)"
        warnings.append(f"scope {scope} matches no note at {at}: this guest's asks find nothing there{near}")
    return warnings


def revoke_guest(brain: Brain, name: str) -> str:
    """Commit the deletion of a guest's policy (broken or not); the commit SHA."""
    check_name(name)
    path = f"{GUEST_DIR}{name}.json"

    def present(view: View) -> None:
        if view.blob_of(path) is None:
            raise BadInput(f"no guest named {name!r}")

    result = brain.commit_files(
        {path: None}, f"guest revoke: {name}", Actor(door="cli", tool="guest revoke"), check=present
    )
    return result.sha
