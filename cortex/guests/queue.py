"""The proposal queue in Redis: guest proposals wait here for the owner's decision.

The only module that imports `redis`. Every state change is one Lua script, so
admission, acceptance and the meters stay correct when several server
processes share one Redis: Redis's atomic scripts are the coordination, no
locks of our own.

States: pending -> accepting -> committed (or back to pending if the commit is
refused); pending -> rejected; pending -> expired after 30 days. Git keeps what must
outlive Redis (receipts, tombstones); Redis keeps only what Git should not.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import hashlib
import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ParamSpec, TypeVar, cast

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from cortex.errors import BadInput, QueueUnavailable, StoreError
from cortex.settings import GUEST_SHARE, QUEUE_CAP

__all__ = [
    "KEEP_DECIDED",
    "MAX_AGE",
    "MAX_WHY_CHARS",
    "METER_TTL",
    "Proposal",
    "ProposalQueue",
    "RedisAnswerCache",
    "RedisConfirmations",
    "RedisRecords",
    "RedisVectors",
    "SOCKET_TIMEOUT",
    "content_digest",
    "shared_secret",
    "tomb_key",
]

MAX_AGE = 30 * 86_400  # a pending proposal expires after 30 days
KEEP_DECIDED = 30 * 86_400  # decided ones stay this long, so a retried accept finds its commit
METER_TTL = 2 * 86_400  # a day's meter key outlives its day, then Redis drops it
# Short timeouts: a dead Redis must fail a guest call in about a second, not hang it.
SOCKET_TIMEOUT = 1.0
MAX_WHY_CHARS = 500


def content_digest(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def tomb_key(path: str, digest: str) -> str:
    """The identity of a rejected proposal: its path and its content digest."""
    return hashlib.sha256(f"{path}\n{digest}".encode()).hexdigest()


@dataclass
class Proposal:
    id: str
    guest: str
    path: str
    mode: str
    content: str
    why: str
    digest: str
    state: str
    created: float
    extra: dict[str, str] = field(default_factory=dict)  # commit, parent, reason, decided, ...

    @classmethod
    def from_hash(cls, h: dict[str, str]) -> Proposal:
        known = {"id", "guest", "path", "mode", "content", "why", "digest", "state", "created"}
        return cls(
            id=h["id"],
            guest=h["guest"],
            path=h["path"],
            mode=h["mode"],
            content=h["content"],
            why=h.get("why", ""),
            digest=h["digest"],
            state=h["state"],
            created=float(h["created"]),
            extra={k: v for k, v in h.items() if k not in known},
        )

    def created_iso(self) -> str:
        return dt.datetime.fromtimestamp(self.created, dt.UTC).isoformat(timespec="seconds")


# Shared by the scripts: pending proposals older than max_age become `expired`.
# Lazy expiry inside the same script as admission and listing, so the cap never
# counts a proposal that is already past its 30 days.
_SWEEP = """
local function sweep(p, now, max_age, keep)
  local old = redis.call('ZRANGEBYSCORE', p..'open', '-inf', now - max_age)
  for _, id in ipairs(old) do
    local key = p..'p:'..id
    local state = redis.call('HGET', key, 'state')
    if state == 'pending' or not state then
      redis.call('ZREM', p..'open', id)
      if state then
        redis.call('HSET', key, 'state', 'expired', 'decided', now)
        redis.call('EXPIRE', key, keep)
        local dk = redis.call('HGET', key, 'dkey')
        if dk and redis.call('HGET', p..'dedupe', dk) == id then redis.call('HDEL', p..'dedupe', dk) end
      end
    end
  end
end
local function close(p, id, key, keep)
  redis.call('ZREM', p..'open', id)
  redis.call('EXPIRE', key, keep)
  local dk = redis.call('HGET', key, 'dkey')
  if dk and redis.call('HGET', p..'dedupe', dk) == id then redis.call('HDEL', p..'dedupe', dk) end
end
"""

# ARGV: prefix, now, max_age, keep, cap, daily_limit, meter_key, meter_ttl,
#       id, guest, path, mode, content, why, digest, tombkey, dkey, guest_cap
_ADMIT = (
    _SWEEP
    + """
local p = ARGV[1]
local now, max_age, keep = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local cap, limit, meter, meter_ttl = tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7], tonumber(ARGV[8])
local id, tk, dk = ARGV[9], ARGV[16], ARGV[17]
if redis.call('EXISTS', p..'tombs:loaded') == 0 then return {'reload'} end
sweep(p, now, max_age, keep)
local tomb = redis.call('HGET', p..'tombs', tk)
if tomb then return {'tombstone', tomb} end
local dup = redis.call('HGET', p..'dedupe', dk)
if dup and redis.call('ZSCORE', p..'open', dup) then return {'duplicate', dup} end
local open = redis.call('ZCARD', p..'open')
if open >= cap then return {'full', tostring(open)} end
-- The guest's own share: at most `cap` (50) open proposals to look at, so a scan is cheap.
local mine = 0
for _, other in ipairs(redis.call('ZRANGE', p..'open', 0, -1)) do
  if redis.call('HGET', p..'p:'..other, 'guest') == ARGV[10] then mine = mine + 1 end
end
if mine >= tonumber(ARGV[18]) then return {'guest_full', tostring(mine)} end
local used = tonumber(redis.call('GET', meter) or '0')
if used >= limit then return {'meter', tostring(used)} end
redis.call('INCR', meter)
redis.call('EXPIRE', meter, meter_ttl)
redis.call('HSET', p..'p:'..id, 'id', id, 'guest', ARGV[10], 'path', ARGV[11], 'mode', ARGV[12],
           'content', ARGV[13], 'why', ARGV[14], 'digest', ARGV[15], 'tkey', tk, 'dkey', dk,
           'state', 'pending', 'created', ARGV[2])
redis.call('ZADD', p..'open', now, id)
redis.call('HSET', p..'dedupe', dk, id)
return {'ok', id}
"""
)

_SWEEP_ONLY = (
    _SWEEP
    + """
sweep(ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]))
return redis.call('ZRANGE', ARGV[1]..'open', 0, -1)
"""
)

# ARGV: prefix, now, max_age, keep, id
_BEGIN_ACCEPT = (
    _SWEEP
    + """
local p, id = ARGV[1], ARGV[5]
sweep(p, tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]))
local key = p..'p:'..id
local state = redis.call('HGET', key, 'state')
if not state then return 'missing' end
if state == 'pending' then
  redis.call('HSET', key, 'state', 'accepting', 'accepting_since', ARGV[2])
  return 'go'
end
if state == 'accepting' then return 'resume' end
return state
"""
)

# ARGV: prefix, id, from_state, to_state, now, keep, field, value, field, value ...
# Moves one proposal between states only if it is in from_state; closes it
# (off the open set, TTL) unless the new state is still open.
_MOVE = (
    _SWEEP
    + """
local p, id, from, to = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local key = p..'p:'..id
local state = redis.call('HGET', key, 'state')
if not state then return 'missing' end
if state ~= from then return state end
redis.call('HSET', key, 'state', to)
for i = 7, #ARGV, 2 do redis.call('HSET', key, ARGV[i], ARGV[i + 1]) end
if to ~= 'pending' and to ~= 'accepting' then
  redis.call('HSET', key, 'decided', ARGV[5])
  close(p, id, key, tonumber(ARGV[6]))
end
return 'ok'
"""
)

# ARGV: prefix, id, now, keep, reason, tomb_json
_REJECT = (
    _SWEEP
    + """
local p, id = ARGV[1], ARGV[2]
local key = p..'p:'..id
local state = redis.call('HGET', key, 'state')
if not state then return 'missing' end
if state ~= 'pending' then return state end
redis.call('HSET', key, 'state', 'rejected', 'reason', ARGV[5], 'decided', ARGV[3])
redis.call('HSET', p..'tombs', redis.call('HGET', key, 'tkey'), ARGV[6])
close(p, id, key, tonumber(ARGV[4]))
return 'ok'
"""
)

# ARGV: key, limit, ttl. Returns the new count, or -1 when the limit is reached.
_TAKE = """
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
if used >= tonumber(ARGV[1]) then return -1 end
used = redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2]))
return used
"""

_REFUND = """
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
if used > 0 then return redis.call('DECR', KEYS[1]) end
return 0
"""


def _hash(fields: dict[str, str]) -> dict[Any, Any]:
    """`fields` as redis-py's stubs take a hash's mapping (their key type is invariant, so a
    dict of str is refused though str is one of the types they list)."""
    return cast(dict[Any, Any], fields)


P = ParamSpec("P")
R = TypeVar("R")


def _guard(fn: Callable[P, R]) -> Callable[P, R]:
    """Redis connection failures become QueueUnavailable, a one-line tool error."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as exc:
            raise QueueUnavailable("queue unavailable: Redis is not answering; try again later") from exc
        except redis.exceptions.ResponseError as exc:
            raise QueueUnavailable(
                f"queue unavailable: Redis refused the command ({str(exc).split(chr(10))[0][:120]})"
            ) from exc

    return wrapper


def _connect(url: str, *, text: bool = True, retries: int | None = 1) -> redis.Redis:
    """A client of the Redis at `url` with short timeouts (a dead Redis fails a call in about
    a second, never hangs it); `retries`: quick re-dials (no backoff) of a connection a Redis
    restart broke, None for redis-py's own default; `text`: replies decoded to str."""
    extra = {} if retries is None else {"retry": Retry(NoBackoff(), retries)}
    return redis.Redis.from_url(
        url, decode_responses=text, socket_timeout=SOCKET_TIMEOUT, socket_connect_timeout=SOCKET_TIMEOUT, **extra
    )


class ProposalQueue:
    """Pending proposals, tombstones and the daily meters of one brain in one Redis."""

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "cortex:",
        cap: int = QUEUE_CAP,
        max_age: int = MAX_AGE,
        clock: Callable[[], dt.datetime] | None = None,
        tombstones: Callable[[], dict[str, str]] | None = None,
    ):
        # One quick retry (no backoff) re-dials a connection that a Redis restart
        # broke; a Redis that is really gone fails in about 2 x SOCKET_TIMEOUT.
        self.r = _connect(url)
        self.prefix = prefix
        self.cap = cap
        self.max_age = max_age
        self.clock = clock or (lambda: dt.datetime.now(dt.UTC))
        # Where tombstones come from when Redis has lost them: Git, set by the owner side.
        self.tombstones = tombstones
        self._admit = self.r.register_script(_ADMIT)
        self._sweep = self.r.register_script(_SWEEP_ONLY)
        self._begin = self.r.register_script(_BEGIN_ACCEPT)
        self._move = self.r.register_script(_MOVE)
        self._reject = self.r.register_script(_REJECT)
        self._take = self.r.register_script(_TAKE)
        self._refund = self.r.register_script(_REFUND)

    # -- plumbing ---------------------------------------------------------

    def _now(self) -> float:
        return self.clock().timestamp()

    def _day(self) -> str:
        return self.clock().date().isoformat()

    def _meter_key(self, kind: str, guest: str) -> str:
        return f"{self.prefix}meter:{kind}:{guest}:{self._day()}"

    def _sweep_args(self) -> list[Any]:
        return [self.prefix, self._now(), self.max_age, KEEP_DECIDED]

    def ping(self) -> bool:
        try:
            return bool(self.r.ping())
        except redis.exceptions.RedisError:
            return False

    def close(self) -> None:
        self.r.close()

    # -- tombstones -------------------------------------------------------

    @_guard
    def reload_tombstones(self) -> int:
        """Copy the tombstones kept in Git into Redis and mark them loaded.

        Merged, never replaced: a reject that lands meanwhile keeps its entry.
        """
        found = self.tombstones() if self.tombstones else {}
        pipe = self.r.pipeline(transaction=True)
        if found:
            pipe.hset(self.prefix + "tombs", mapping=_hash(found))
        pipe.set(self.prefix + "tombs:loaded", "1")
        pipe.execute()
        return len(found)

    @_guard
    # -- guests -----------------------------------------------------------

    @_guard
    def admit(
        self, guest: str, path: str, mode: str, content: str, why: str, daily_limit: int, max_pending: int = GUEST_SHARE
    ) -> tuple[Proposal, bool]:
        """Queue one proposal atomically; (proposal, newly_queued). BadInput when refused.

        A resend of an open proposal (same guest, mode, path and content) returns
        the queued one, so a guest may retry after a lost reply.
        """
        digest = content_digest(content)
        tk = tomb_key(path, digest)
        dk = hashlib.sha256(f"{guest}\n{mode}\n{tk}".encode()).hexdigest()
        pid = "p_" + secrets.token_hex(8)
        for _ in range(2):
            now = self._now()
            result = self._admit(
                args=[
                    self.prefix,
                    now,
                    self.max_age,
                    KEEP_DECIDED,
                    self.cap,
                    daily_limit,
                    self._meter_key("proposals", guest),
                    METER_TTL,
                    pid,
                    guest,
                    path,
                    mode,
                    content,
                    why,
                    digest,
                    tk,
                    dk,
                    max_pending,
                ]
            )
            verdict = result[0]
            if verdict == "reload":
                self.reload_tombstones()
                continue
            if verdict == "ok":
                return self.get(pid) or Proposal(pid, guest, path, mode, content, why, digest, "pending", now), True
            if verdict == "duplicate":
                found = self.get(result[1])
                if found is not None:
                    return found, False
                continue
            if verdict == "tombstone":
                # Not the owner's reason, nor who sent it before: that is between the owner
                # and the guest it was written to.
                raise BadInput(
                    "refused: the owner has declined this content for this path; change the content to propose again"
                )
            if verdict == "full":
                raise BadInput(
                    f"queue full: {result[1]} proposals await review; try again after the owner reviews them"
                )
            if verdict == "guest_full":
                raise BadInput(
                    f"your share of the review queue is full: {result[1]} of your proposals await "
                    f"the owner's review (limit {max_pending}); try again after the owner reviews them"
                )
            if verdict == "meter":
                raise BadInput(f"daily proposal limit reached ({daily_limit} per day); try again tomorrow")
            raise StoreError(f"unexpected queue reply {verdict!r}")
        raise QueueUnavailable("queue unavailable: could not load the tombstones; try again later")

    @_guard
    def take(self, kind: str, guest: str, limit: int) -> int | None:
        """Count one use of a daily meter; None when the day's limit is already used."""
        used = self._take(keys=[self._meter_key(kind, guest)], args=[limit, METER_TTL])
        return None if int(used) < 0 else int(used)

    @_guard
    def refund(self, kind: str, guest: str) -> None:
        self._refund(keys=[self._meter_key(kind, guest)])

    @_guard
    def used(self, kind: str, guest: str) -> int:
        return int(self.r.get(self._meter_key(kind, guest)) or 0)

    # -- the owner --------------------------------------------------------

    @_guard
    def get(self, pid: str) -> Proposal | None:
        h = cast(dict[str, str], self.r.hgetall(self.prefix + "p:" + pid))  # a text connection: str
        return Proposal.from_hash(h) if h else None

    @_guard
    def open(self) -> list[Proposal]:
        """Pending and accepting proposals, oldest first (expiring the old ones first)."""
        ids = self._sweep(args=self._sweep_args())
        pipe = self.r.pipeline(transaction=False)
        for pid in ids:
            pipe.hgetall(self.prefix + "p:" + pid)
        return [Proposal.from_hash(h) for h in pipe.execute() if h]

    @_guard
    def begin_accept(self, pid: str) -> str:
        """'go' (now accepting), 'resume' (was accepting), or the proposal's final state."""
        return str(self._begin(args=self._sweep_args() + [pid]))

    @_guard
    def move(self, pid: str, from_state: str, to_state: str, **fields: str) -> str:
        """'ok', or the state the proposal was in instead of `from_state` ('missing' if none)."""
        args: list[Any] = [self.prefix, pid, from_state, to_state, self._now(), KEEP_DECIDED]
        for k, v in fields.items():
            args += [k, v]
        return str(self._move(args=args))

    @_guard
    def set_fields(self, pid: str, **fields: str) -> None:
        self.r.hset(self.prefix + "p:" + pid, mapping=_hash(fields))

    @_guard
    def reject(self, pid: str, reason: str, tomb: dict[str, Any]) -> str:
        """pending -> rejected, with its tombstone, in one script; 'ok' or the state it was in."""
        return str(
            self._reject(args=[self.prefix, pid, self._now(), KEEP_DECIDED, reason, json.dumps(tomb, sort_keys=True)])
        )


class RedisAnswerCache:
    """brain_ask's answer cache in Redis (the ask.AnswerCache protocol).

    Lives here because this is the one module that talks to Redis. A cache must
    never fail an ask: when Redis is away, a get is a miss and a set is dropped.
    """

    TTL = 7 * 86_400  # keys embed the SHA, so old entries are dead weight, not wrong answers

    def __init__(self, url: str, prefix: str = "cortex:"):
        self.r = _connect(url, retries=None)
        self.prefix = prefix

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            raw = self.r.get(self.prefix + key)
        except redis.exceptions.RedisError:
            return None
        return json.loads(raw) if raw else None

    def set(self, key: str, value: dict[str, Any]) -> None:
        with contextlib.suppress(redis.exceptions.RedisError):
            self.r.set(self.prefix + key, json.dumps(value), ex=self.TTL)


# Marks a record used and hands back what it held before, in one step: a second caller sees
# `used` and nothing else can slip between the read and the write (codes, refresh tokens).
_CLAIM = """
local raw = redis.call('GET', KEYS[1])
if not raw then return false end
local rec = cjson.decode(raw)
if rec['used'] then return raw end
local ttl = redis.call('PTTL', KEYS[1])
local before = raw
rec['used'] = true
if ttl and ttl > 0 then
  redis.call('SET', KEYS[1], cjson.encode(rec), 'PX', ttl)
else
  redis.call('SET', KEYS[1], cjson.encode(rec))
end
return before
"""


class RedisRecords:
    """Small JSON records with a lifetime, shared by every instance on one Redis: what the
    OAuth door keeps in hosted mode (clients, codes, tokens by hash). Lives here because this
    is the one module that talks to Redis. Connection failures are QueueUnavailable: the
    door answers with a server error, never a token."""

    def __init__(self, url: str, prefix: str = "cortex:oauth:"):
        self.r = _connect(url)
        self.prefix = prefix
        self._claim = self.r.register_script(_CLAIM)

    @_guard
    def get(self, key: str) -> dict[str, Any] | None:
        raw = self.r.get(self.prefix + key)
        return json.loads(raw) if raw else None

    @_guard
    def get_many(self, keys: list[str]) -> list[dict[str, Any] | None]:
        return [json.loads(raw) if raw else None for raw in self.r.mget([self.prefix + k for k in keys])]

    @_guard
    def put(self, key: str, value: dict[str, Any], ttl: int | None = None) -> None:
        self.r.set(self.prefix + key, json.dumps(value, sort_keys=True), ex=ttl)

    @_guard
    def delete(self, *keys: str) -> None:
        if keys:
            self.r.delete(*[self.prefix + k for k in keys])

    @_guard
    def claim(self, key: str) -> dict[str, Any] | None:
        raw = self._claim(keys=[self.prefix + key])
        return json.loads(raw) if raw else None

    @_guard
    def scan(self, kind: str) -> list[tuple[str, dict[str, Any]]]:
        """Every record whose key starts with `kind` (a few dozen clients and families)."""
        found = []
        for full in self.r.scan_iter(match=self.prefix + kind + "*", count=500):
            raw = self.r.get(full)
            if raw:
                found.append((full[len(self.prefix) :], json.loads(raw)))
        return found

    def close(self) -> None:
        self.r.close()


class RedisConfirmations:
    """brain_write's open confirmations (the tools.toolset.Confirmations protocol) in Redis, for
    hosted mode: one instance asks, any instance answers, once (GET and DEL in one transaction),
    and an unanswered one lapses after TTL_S. Each holds the write's digest and the note's blob
    the owner was shown. Lives here because this is the one module that talks to Redis. While
    Redis is away a write that would ask is refused in one line, never made unasked."""

    TTL_S = 600
    MAX_KEY = 64  # the keys `ask` makes are 22 characters
    AWAY = "the owner's confirmation cannot be kept: Redis is not answering; nothing changed, try again later"

    def __init__(self, url: str, prefix: str = "cortex:confirm:"):
        self.r = _connect(url)
        self.prefix = prefix

    def ask(self, write: str, blob: str) -> str:
        key = secrets.token_urlsafe(16)
        try:
            self.r.set(self.prefix + key, json.dumps([write, blob]), ex=self.TTL_S)
        except redis.exceptions.RedisError as exc:
            raise QueueUnavailable(self.AWAY) from exc
        return key

    def answer(self, key: object) -> tuple[str, str] | None:
        """(write digest, blob) of the open confirmation `key`, closing it; None when there is none."""
        if not isinstance(key, str) or not key or len(key) > self.MAX_KEY:
            return None
        try:
            pipe = self.r.pipeline(transaction=True)
            pipe.get(self.prefix + key)
            pipe.delete(self.prefix + key)
            raw, _ = pipe.execute()
        except redis.exceptions.RedisError as exc:
            raise QueueUnavailable(self.AWAY) from exc
        if not raw:
            return None
        write, blob = json.loads(raw)
        return str(write), str(blob)

    def close(self) -> None:
        self.r.close()


@_guard
def shared_secret(url: str, name: str) -> bytes:
    """A secret every instance on the Redis at `url` shares, under `cortex:secret:<name>`: 32
    random bytes (as hex) made by the first to ask, read by the rest (SET NX and GET in one
    transaction). QueueUnavailable while Redis is away."""
    r = _connect(url)
    key = f"cortex:secret:{name}"
    try:
        pipe = r.pipeline(transaction=True)
        pipe.set(key, secrets.token_hex(32), nx=True)
        pipe.get(key)
        _, value = pipe.execute()
    finally:
        r.close()
    return str(value).encode()


class RedisVectors:
    """Passage vectors in Redis, shared by every instance (the meaning.vectors.SharedVectors
    protocol): one key a passage, `cortex:vec:` and its 16-byte `passage_key`, holding
    `vectors.encode_row`'s 396 bytes (int8 row, scale, check).

    Lives here because this is the one module that talks to Redis. Like the answer cache it
    never fails the caller: an unreachable Redis is all misses and a dropped put, and the
    arm embeds those passages itself. No expiry: a key is the text embedded, so an old one
    is dead weight, never a wrong vector; under `maxmemory` an evicted one is embedded again.
    """

    PREFIX = b"cortex:vec:"
    CLAIM = b"cortex:vec-claim:"
    # An instance's claim on a passage it is about to embed: others wait for its vector this
    # long at most (a task embeds 48 passages, some seconds), then embed it themselves.
    CLAIM_S = 120
    CHUNK = 1000  # keys a round trip

    def __init__(self, url: str):
        self.r = _connect(url, text=False, retries=0)

    def get_many(self, keys: list[bytes]) -> list[bytes | None]:
        out: list[bytes | None] = []
        for at in range(0, len(keys), self.CHUNK):
            part = keys[at : at + self.CHUNK]
            try:
                out.extend(cast(list[bytes | None], self.r.mget([self.PREFIX + k for k in part])))  # bytes: text=False
            except redis.exceptions.RedisError:
                out.extend([None] * len(part))
        return out

    def put_many(self, items: list[tuple[bytes, bytes]]) -> None:
        """Set the values and lift their claims: a passage is claimed only while it is embedded."""
        for at in range(0, len(items), self.CHUNK):
            part = items[at : at + self.CHUNK]
            try:
                pipe = self.r.pipeline(transaction=False)
                pipe.mset({self.PREFIX + k: v for k, v in part})
                pipe.delete(*[self.CLAIM + k for k, _ in part])
                pipe.execute()
            except redis.exceptions.RedisError:
                return

    def claim(self, keys: list[bytes]) -> list[bool]:
        out: list[bool] = []
        for at in range(0, len(keys), self.CHUNK):
            part = keys[at : at + self.CHUNK]
            try:
                pipe = self.r.pipeline(transaction=False)
                for k in part:
                    pipe.set(self.CLAIM + k, b"1", nx=True, ex=self.CLAIM_S)
                out.extend(bool(x) for x in pipe.execute())
            except redis.exceptions.RedisError:
                out.extend([True] * len(part))  # no Redis, no one to share with: embed it here
        return out
