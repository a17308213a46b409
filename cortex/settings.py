"""Settings: every knob, read from the command line and the environment.

Each setting is documented in the README's Configuration table.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from cortex.errors import BadInput

# The review queue: capped at 50, refuse rather than evict unreviewed work (pending and
# accepting count). One guest's share by default (`cortex guest add --max-pending`): one
# guest filled all 50 places, and every other guest got "queue full".
QUEUE_CAP = 50
GUEST_SHARE = 10
# A new guest's policy unless `cortex guest add` says otherwise.
GUEST_DEFAULTS = {"max_k": 5, "daily_asks": 50, "daily_proposals": 10, "max_pending": GUEST_SHARE}

DEFAULT_HOSTS = ["127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost"]


def allowed(value: str, patterns: list[str]) -> bool:
    """`value` equals a pattern, or a `…:*` pattern with a numeric port in place of `*`.

    Exact, never a prefix: `localhost:*` admits `localhost:8765`, not `localhost:1.evil.example`.
    """
    for pattern in patterns:
        if value == pattern:
            return True
        if pattern.endswith(":*"):
            base, _, port = value.rpartition(":")
            if base == pattern[:-2] and port.isascii() and port.isdigit() and 0 < len(port) <= 5:
                return True
    return False


def _positive(name: str, value: str | None) -> int | None:
    if not value:
        return None
    if not value.strip().isdigit() or int(value) < 1:
        raise BadInput(f"{name} must be a whole number of at least 1, not {value!r}")
    return int(value)


def _split(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


@dataclass
class Settings:
    home: Path
    brain: Path
    token: str | None = None
    url_secret: str | None = None
    tz: str = "UTC"
    host: str = "127.0.0.1"
    port: int = 8765
    allowed_hosts: list[str] = field(default_factory=list)
    allowed_origins: list[str] = field(default_factory=list)
    redis_url: str | None = None
    reader_model: str | None = None
    anthropic_key: str | None = None
    console_passcode: str | None = None
    pack_bytes: int = 60_000
    ask_sweep: int = 2  # CORTEX_ASK_SWEEP: further packs a model reader reads before a miss
    # issue 7: hand edits and hosted mode
    remote: str | None = None  # CORTEX_REMOTE: a Git URL or a local path
    remote_token: str | None = None  # CORTEX_REMOTE_TOKEN (or GIT_TOKEN / GITHUB_TOKEN), HTTPS only
    remote_user: str = "x-access-token"  # CORTEX_REMOTE_USER: the user name sent with the token
    fetch_interval: float = 5.0  # CORTEX_FETCH_INTERVAL, seconds
    webhook_secret: str | None = None  # CORTEX_WEBHOOK_SECRET: HMAC-SHA256 key of POST /hooks/push
    debounce_ms: int = 300  # CORTEX_DEBOUNCE_MS: quiet time before a hand edit is committed
    # CORTEX_TRUSTED_PROXIES: addresses of the reverse proxies whose X-Forwarded-For/-Proto
    # are believed. Empty (the default): no header is, so no client can pick its own address.
    trusted_proxies: list[str] = field(default_factory=list)
    branch: str | None = None  # CORTEX_BRANCH: the branch to serve; default the one HEAD names
    index: str = "auto"  # CORTEX_INDEX: auto (only where INDEX.md exists), on or off
    author: str | None = None  # CORTEX_AUTHOR: "Name <email>" for the owner's own commits
    # CORTEX_PERSIST_INDEX: on (keep the parsed notes and their index in <home>/index and
    # load them on start) or off (build from the notes on every start)
    persist_index: str = "on"
    # CORTEX_BUILD_WORKERS: processes a full index build parses notes in; unset: one a core
    # (up to 4) for a brain of 2,000 notes or more, else 1 (the server's own process)
    build_workers: int | None = None
    # CORTEX_MEANING: on (search and ask by meaning too, once the background embedding is
    # done) or off (lexical only); CORTEX_EMBED_MODEL: a folder of model.onnx + tokenizer.json
    # to use instead of the pinned all-MiniLM-L6-v2
    meaning: str = "on"
    embed_model: str | None = None
    # CORTEX_MODEL_CACHE: where the converted model is kept (shared by every brain and
    # state folder of the user: converting costs ~5 s); default $XDG_CACHE_HOME/cortex/models
    model_cache: Path | None = None
    # CORTEX_READER: who reads for brain_ask: auto (the server model when a key is set, else
    # the client's own model when it can sample, else offline), server, client or offline;
    # CORTEX_READER_TIMEOUT: seconds the client's model may take (a later answer is not used)
    reader: str = "auto"
    reader_timeout: int = 60

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None, **overrides) -> "Settings":
        env = dict(os.environ if env is None else env)
        home = Path(overrides.pop("home", None) or env.get("CORTEX_HOME") or Path.home() / ".cortex")
        brain = overrides.pop("brain", None) or env.get("CORTEX_BRAIN") or home / "brain"
        port = overrides.pop("port", None) or env.get("CORTEX_PORT") or env.get("PORT") or 8765
        s = cls(
            home=home,
            brain=Path(brain).expanduser(),
            token=env.get("CORTEX_TOKEN") or None,
            url_secret=env.get("CORTEX_URL_SECRET") or None,
            tz=env.get("CORTEX_TZ") or "UTC",
            host=overrides.pop("host", None) or env.get("CORTEX_HOST") or "127.0.0.1",
            port=int(port),
            allowed_hosts=_split(env.get("CORTEX_ALLOWED_HOSTS")),
            allowed_origins=_split(env.get("CORTEX_ALLOWED_ORIGINS")),
            redis_url=env.get("REDIS_URL") or None,
            reader_model=env.get("CORTEX_READER_MODEL") or "claude-sonnet-4-5",
            anthropic_key=env.get("ANTHROPIC_API_KEY") or None,
            console_passcode=env.get("CORTEX_CONSOLE_PASSCODE") or None,
            pack_bytes=int(env.get("CORTEX_PACK_BYTES") or 60_000),
            ask_sweep=int(env.get("CORTEX_ASK_SWEEP") or 2),
            remote=env.get("CORTEX_REMOTE") or None,
            remote_token=env.get("CORTEX_REMOTE_TOKEN") or env.get("GIT_TOKEN") or env.get("GITHUB_TOKEN") or None,
            remote_user=env.get("CORTEX_REMOTE_USER") or "x-access-token",
            fetch_interval=float(env.get("CORTEX_FETCH_INTERVAL") or 5.0),
            webhook_secret=env.get("CORTEX_WEBHOOK_SECRET") or None,
            debounce_ms=int(env.get("CORTEX_DEBOUNCE_MS") or 300),
            trusted_proxies=_split(env.get("CORTEX_TRUSTED_PROXIES")),
            branch=env.get("CORTEX_BRANCH") or None,
            index=(env.get("CORTEX_INDEX") or "auto").strip().lower(),
            author=env.get("CORTEX_AUTHOR") or None,
            persist_index=(env.get("CORTEX_PERSIST_INDEX") or "on").strip().lower(),
            build_workers=_positive("CORTEX_BUILD_WORKERS", env.get("CORTEX_BUILD_WORKERS")),
            meaning=(env.get("CORTEX_MEANING") or "on").strip().lower(),
            embed_model=env.get("CORTEX_EMBED_MODEL") or None,
            model_cache=Path(
                env.get("CORTEX_MODEL_CACHE")
                or Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "cortex" / "models"
            ).expanduser(),
            reader=(env.get("CORTEX_READER") or "auto").strip().lower(),
            reader_timeout=_positive("CORTEX_READER_TIMEOUT", env.get("CORTEX_READER_TIMEOUT")) or 60,
        )
        for key, value in overrides.items():
            setattr(s, key, value)
        return s

    def uvicorn_options(self) -> dict[str, object]:
        """How uvicorn treats proxy headers: believed only from CORTEX_TRUSTED_PROXIES.

        uvicorn's own default trusts X-Forwarded-For from 127.0.0.1, which let any
        local client choose the address the sign-in throttle counts against.
        """
        if not self.trusted_proxies:
            return {"proxy_headers": False}
        return {"proxy_headers": True, "forwarded_allow_ips": ",".join(self.trusted_proxies)}

    def hosts(self) -> list[str]:
        return DEFAULT_HOSTS + self.allowed_hosts

    def origins(self) -> list[str]:
        return ["http://127.0.0.1:*", "http://localhost:*"] + self.allowed_origins


def load_or_make_secret(path: Path, nbytes: int = 32) -> tuple[str, bool]:
    """A secret kept in a 0600 file in the state folder; (secret, newly_made)."""
    if path.exists():
        return path.read_text().strip(), False
    path.parent.mkdir(parents=True, exist_ok=True)
    secret = secrets.token_urlsafe(nbytes)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(secret + "\n")
    return secret, True
