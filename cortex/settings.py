"""Settings: every knob Cortex reads from the environment, each declared once.

A setting is a field of `Settings` with its variable (and any fallback names), how its
text is read and checked, its default and a one-line doc. `Settings.from_env` reads them
all; a bad value is one line naming the variable, raised as BadInput (the command prints
it without a traceback), so the brain and the Git store are given checked values. The
README's Configuration table is `settings_table()`'s output (`cortex settings` prints it).
"""

from __future__ import annotations

import hashlib
import hmac
import math
import os
import re
import secrets
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any, TypedDict
from zoneinfo import ZoneInfo

from cortex import state_folder
from cortex.errors import BadInput
from cortex.files import write_atomic

__all__ = [
    "CLONE_NAME",
    "DEFAULT_HOSTS",
    "GUEST_DEFAULTS",
    "HEADER_FILE",
    "PYTHON_FILE",
    "keep_python_file",
    "identity_proof",
    "GUEST_SHARE",
    "MIN_SECRET",
    "QUEUE_CAP",
    "SECRET_FILES",
    "Setting",
    "Settings",
    "allowed",
    "check_door_secrets",
    "default_home",
    "identity",
    "keep_header_file",
    "load_or_make_secret",
    "origin_url",
    "read_secret_file",
    "read_setting",
    "secret_in_effect",
    "settings_table",
    "weak_secret",
]

# The review queue: capped at 50, refuse rather than evict unreviewed work (pending and
# accepting count). One guest's share by default (`cortex guest add --max-pending`): one
# guest filled all 50 places, and every other guest got "queue full".
QUEUE_CAP = 50
GUEST_SHARE = 10
# A new guest's policy unless `cortex guest add` says otherwise.
GUEST_DEFAULTS = {"max_k": 5, "daily_asks": 50, "daily_proposals": 10, "max_pending": GUEST_SHARE}

CLONE_NAME = "remote-clone.git"  # hosted mode: the brain's clone in the state folder

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


# -- how a variable's text becomes a value: (variable name, text) -> value, or BadInput ----

Read = Callable[[str, str], Any]


def text(name: str, raw: str) -> str:
    return raw


def path(name: str, raw: str) -> Path:
    return Path(raw)


def user_path(name: str, raw: str) -> Path:
    return Path(raw).expanduser()


def words(name: str, raw: str) -> list[str]:
    """A comma-separated list, blanks dropped."""
    return [v.strip() for v in raw.split(",") if v.strip()]


def one_of(*options: str) -> Read:
    said = " or ".join(options) if len(options) == 2 else "one of " + ", ".join(options)

    def read(name: str, raw: str) -> str:
        value = raw.strip().lower()
        if value not in options:
            raise BadInput(f"{name} must be {said}, not {value!r}")
        return value

    return read


def whole(low: int, high: int | None = None) -> Read:
    said = f"a whole number from {low} to {high}" if high is not None else f"a whole number of at least {low}"

    def read(name: str, raw: str) -> int:
        value = raw.strip()
        if not (value.isascii() and value.isdigit()) or int(value) < low or (high is not None and int(value) > high):
            raise BadInput(f"{name} must be {said}, not {raw!r}")
        return int(value)

    return read


def zone(name: str, raw: str) -> str:
    """A time zone name zoneinfo knows (`Europe/Paris`, `UTC`)."""
    try:
        ZoneInfo(raw)
    except Exception:  # ZoneInfoNotFoundError, ValueError (a path, not a key)
        raise BadInput(f"{name} must be a time zone zoneinfo knows, such as Europe/Paris, not {raw!r}") from None
    return raw


def identity(name: str, raw: str) -> tuple[str, str]:
    """(name, email) of `Name <email>`; the Git store reads CORTEX_AUTHOR's text with it."""
    m = re.fullmatch(r"\s*(.+?)\s*<([^<>\s]+)>\s*", raw)
    if not m:
        raise BadInput(f"{name} must look like 'Name <email>', not {raw!r}")
    return m.group(1), m.group(2)


def name_and_email(name: str, raw: str) -> str:
    """`Name <email>`, kept as written."""
    identity(name, raw)
    return raw


MIN_SECRET = 16  # characters; a generated secret has 43 (32 random bytes, URL-safe base64)


def weak_secret(value: str) -> str | None:
    """Why `value` cannot guard a door (blank, short, padded with white space), or None."""
    if not value.strip():
        return "is blank"
    if value != value.strip():
        return "begins or ends with white space, which a header or a form drops"
    if len(value) < MIN_SECRET:
        return f"is shorter than {MIN_SECRET} characters"
    return None


def secret(name: str, raw: str) -> str:
    """A secret Cortex checks what it is sent against: refused when it is weak."""
    why = weak_secret(raw)
    if why:
        raise BadInput(f"{name} {why}; use {MIN_SECRET} or more random characters (openssl rand -hex 32)")
    return raw


def seconds(name: str, raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise BadInput(f"{name} must be a number of seconds above 0, not {raw!r}")
    return value


def origin_url(name: str, raw: str) -> str:
    """An origin: https://host[:port] (http only on a loopback host), no path, query or fragment."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(raw.strip())
        port = parts.port
    except ValueError:
        parts, port = None, None
    local = parts is not None and parts.hostname in ("127.0.0.1", "localhost", "::1")
    if (
        parts is None
        or not parts.hostname
        or parts.scheme not in ("https", "http")
        or (parts.scheme == "http" and not local)
        or parts.path not in ("", "/")
        or parts.query
        or parts.fragment
        or parts.username
    ):
        raise BadInput(
            f"{name} must be the origin clients reach, like https://notes.example.org (http only for "
            f"127.0.0.1 or localhost; no path), not {raw!r}"
        )
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{parts.scheme}://{host.lower()}" + (f":{port}" if port else "")


class UvicornOptions(TypedDict, total=False):
    """The proxy-header options `Settings.uvicorn_options` hands uvicorn.Config."""

    proxy_headers: bool
    forwarded_allow_ips: str


@dataclass(frozen=True)
class Setting:
    """One setting's declaration: its variables (the first set wins), how it is read, its docs."""

    names: tuple[str, ...]
    doc: str
    read: Read = text
    shown: str | None = None  # the default as the table shows it (Markdown), when not the field's own
    flag: str | None = None  # the command-line option that overrides it
    derive: Callable[[dict[str, Any], dict[str, str]], Any] | None = None  # a default made from others

    def lookup(self, env: dict[str, str]) -> tuple[str, str] | None:
        """(variable, text) of the first of `names` set to something; None when none is."""
        for name in self.names:
            if env.get(name):
                return name, env[name]
        return None


def setting(
    names: str | tuple[str, ...],
    doc: str,
    default: Any = None,
    *,
    read: Read = text,
    shown: str | None = None,
    flag: str | None = None,
    derive: Callable[[dict[str, Any], dict[str, str]], Any] | None = None,
    many: bool = False,
) -> Any:
    """A dataclass field declaring one setting (`many`: a list, empty by default)."""
    names = (names,) if isinstance(names, str) else names
    meta = {"setting": Setting(names, doc, read, shown, flag, derive)}
    if many:
        return field(default_factory=list, metadata=meta)
    return field(default=default, metadata=meta)


def _model_cache(values: dict[str, Any], env: dict[str, str]) -> Path:
    return (Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "cortex" / "models").expanduser()


def default_home() -> Path:
    """The state folder when CORTEX_HOME is unset."""
    return Path.home() / ".cortex"


@dataclass
class Settings:
    """Every setting; `from_env` reads them, the fields' declarations say how."""

    home: Path = setting(
        "CORTEX_HOME",
        "state folder: generated secrets (0600 files), the default brain, the saved index (`index/`)",
        read=path,
        shown="`~/.cortex`",
        derive=lambda values, env: default_home(),
    )
    brain: Path = setting(
        "CORTEX_BRAIN",
        "the brain repository (bare or with a working tree); the default is made from the template on first run",
        read=user_path,
        shown="`$CORTEX_HOME/brain`",
        flag="--brain",
        derive=lambda values, env: Path(values["home"] / "brain").expanduser(),
    )
    token: str | None = setting(
        "CORTEX_TOKEN", f"the owner bearer token ({MIN_SECRET} characters or more)", read=secret, shown="generated"
    )
    url_secret: str | None = setting(
        "CORTEX_URL_SECRET",
        f"the secret in `/s/<secret>/mcp` ({MIN_SECRET} characters or more)",
        read=secret,
        shown="generated",
    )
    host: str = setting("CORTEX_HOST", "bind address", "127.0.0.1", flag="--host")
    port: int = setting(("CORTEX_PORT", "PORT"), "port", 8765, read=whole(1, 65535), flag="--port")
    tz: str = setting(
        "CORTEX_TZ",
        'the brain\'s time zone (log file dates, capture times, "today" for `valid_until`)',
        "UTC",
        read=zone,
    )
    allowed_hosts: list[str] = setting(
        "CORTEX_ALLOWED_HOSTS",
        "extra allowed Host values, comma-separated (`notes.example.org`, `host:*`)",
        read=words,
        many=True,
    )
    allowed_origins: list[str] = setting(
        "CORTEX_ALLOWED_ORIGINS", "extra allowed Origin values, comma-separated", read=words, many=True
    )
    retired_statuses: list[str] = setting(
        "CORTEX_RETIRED_STATUSES",
        "frontmatter `status` words of your own that retire a note, comma-separated (superseded, retracted, "
        "deprecated, archived and obsolete always do; any other status leaves a note live)",
        read=words,
        many=True,
    )
    anthropic_key: str | None = setting("ANTHROPIC_API_KEY", "enables the model reader")
    reader_model: str = setting("CORTEX_READER_MODEL", "the reader model", "claude-sonnet-4-5")
    pack_bytes: int = setting("CORTEX_PACK_BYTES", "the ask pack's byte budget", 60_000, read=whole(1))
    ask_sweep: int = setting(
        "CORTEX_ASK_SWEEP",
        "further packs a model reader reads when it finds nothing while notes holding a distinctive term "
        "of the question are unread (0: none)",
        2,
        read=whole(0),
    )
    reader: str = setting(
        "CORTEX_READER",
        "who reads for `brain_ask`: `auto` (the server model when `ANTHROPIC_API_KEY` is set, else the "
        "client's own model when its session can sample, else the offline reader), `server`, `client` or "
        "`offline` (that one first; one that cannot read hands over to the next of auto's order, and the "
        "reply's `reader_note` says why)",
        "auto",
        read=one_of("auto", "server", "client", "offline"),
    )
    reader_timeout: int = setting(
        "CORTEX_READER_TIMEOUT",
        "seconds the client's model may take to answer a sampling request; a later answer is not used and "
        "the next reader answers",
        60,
        read=whole(1),
    )
    redis_url: str | None = setting(
        "REDIS_URL",
        "a Redis for the guest queue, meters and answer cache, and in hosted mode the meaning arm's vectors "
        "(shared by every instance); unset: a private `redis-server`",
    )
    console_passcode: str | None = setting(
        "CORTEX_CONSOLE_PASSCODE",
        f"a passcode for the console, besides the owner token ({MIN_SECRET} characters or more)",
        read=secret,
    )
    oauth: str = setting(
        "CORTEX_OAUTH",
        "`on`: the owner door also signs clients in with OAuth 2.1 (discovery, registration, the owner's "
        "consent in the console); `off`: the owner token and the secret URL only, and OAuth probes get 404",
        "on",
        read=one_of("on", "off"),
    )
    confirm_writes: str = setting(
        "CORTEX_CONFIRM_WRITES",
        "`on`: a delete, a move, and a replace not pinned by `expected_blob` ask the owner first where the "
        "client can answer (a 2026-07-28 session whose client takes elicitation); `off`: never ask",
        "on",
        read=one_of("on", "off"),
    )
    public_url: str | None = setting(
        "CORTEX_PUBLIC_URL",
        "the origin clients reach the server at (`https://notes.example.org`): OAuth's issuer and resource, "
        "and its Host the only one OAuth answers; unset, OAuth answers on 127.0.0.1, localhost and [::1] only",
        read=origin_url,
    )
    # No proxy header is believed by default, so no client can pick its own address.
    trusted_proxies: list[str] = setting(
        "CORTEX_TRUSTED_PROXIES",
        "addresses of reverse proxies whose `X-Forwarded-For`/`-Proto` are believed, comma-separated; "
        "unset, none is (the sign-in throttle counts the socket's address)",
        read=words,
        many=True,
    )
    branch: str | None = setting(
        "CORTEX_BRANCH",
        "the branch to serve (hand edits and hosted mode use it too)",
        shown="the branch HEAD names",
    )
    index: str = setting(
        "CORTEX_INDEX",
        "`auto`: keep `INDEX.md` up to date only where the brain has one Cortex wrote; `on`: always "
        "(refused at start if the brain's `INDEX.md` is a person's own); `off`: never. An `INDEX.md` "
        "Cortex did not write is never touched",
        "auto",
        read=one_of("auto", "on", "off"),
    )
    author: str | None = setting(
        "CORTEX_AUTHOR",
        "`Name <email>` for the owner's own commits (hand edits, `cortex init` in place)",
        shown="Git's `user.name <user.email>`",
        read=name_and_email,
    )
    debounce_ms: int = setting(
        "CORTEX_DEBOUNCE_MS", "quiet time, in ms, before a hand edit is committed", 300, read=whole(0)
    )
    build_workers: int | None = setting(
        "CORTEX_BUILD_WORKERS",
        "processes a full index build reads and parses notes in (a first start, a damaged or missing saved "
        "index, `cortex reindex`); unset: one a core, at most 4, for a brain of 2,000 notes or more, else 1 "
        "(the server's own process)",
        read=whole(1),
        shown="by size",
    )
    persist_index: str = setting(
        "CORTEX_PERSIST_INDEX",
        "`on`: keep the parsed notes and their index in `$CORTEX_HOME/index/` and load them on start; "
        "`off`: build them from the notes on every start (and write no file)",
        "on",
        read=one_of("on", "off"),
    )
    meaning: str = setting(
        "CORTEX_MEANING",
        "`on`: search and ask by meaning too (the local sentence-embedding arm, all-MiniLM-L6-v2), over the "
        "notes embedded so far (the background embedding goes newest first) and by words for the rest; "
        "`off`: lexical only. Every search reply's `meaning` line and `/healthz` say how much meaning covers",
        "on",
        read=one_of("on", "off"),
    )
    embed_model: str | None = setting(
        "CORTEX_EMBED_MODEL",
        "a folder holding `model.onnx` and `tokenizer.json` to embed with instead of the pinned model (its "
        "vectors are keyed by the file's hash)",
    )
    # Shared by every brain and state folder of the user: converting costs ~5 s.
    model_cache: Path | None = setting(
        "CORTEX_MODEL_CACHE",
        "where the pinned model, converted to ONNX on first use (~5 s), is kept with its checksum",
        read=user_path,
        shown="`$XDG_CACHE_HOME/cortex/models`",
        derive=_model_cache,
    )
    remote: str | None = setting(
        "CORTEX_REMOTE",
        f"a Git URL or a local path: hosted mode, the brain is a clone of it in `$CORTEX_HOME/{CLONE_NAME}`",
    )
    remote_token: str | None = setting(
        ("CORTEX_REMOTE_TOKEN", "GIT_TOKEN", "GITHUB_TOKEN"),
        "the token for an HTTPS remote (never put in the URL, a log line or a reply)",
    )
    remote_user: str = setting(
        "CORTEX_REMOTE_USER", "the user name sent with the token (GitLab wants `oauth2`)", "x-access-token"
    )
    fetch_interval: float = setting("CORTEX_FETCH_INTERVAL", "seconds between fetches of the remote", 5.0, read=seconds)
    webhook_secret: str | None = setting(
        "CORTEX_WEBHOOK_SECRET",
        f"the HMAC-SHA256 key of `POST /hooks/push` ({MIN_SECRET} characters or more); unset, the route is 404",
        read=secret,
    )
    template: Path | None = setting(
        "CORTEX_TEMPLATE", "the brain template new brains are made from", read=path, shown="the one shipped"
    )

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None, **overrides: Any) -> Settings:
        """Every setting from `env` (default: the process environment); BadInput, in one line
        naming the variable, for a value it cannot use.

        `overrides` (the command line's options, a test's values) win over the environment;
        None means not given. Text is read as the variable's would be. A name that is no
        setting is a TypeError, as an unknown keyword is: a misspelt override never falls
        back to the default unnoticed.
        """
        unknown = sorted(set(overrides) - {f.name for f in fields(cls)})
        if unknown:
            raise TypeError(f"Settings.from_env() got an unexpected keyword argument {unknown[0]!r}")
        env = dict(os.environ if env is None else env)
        values: dict[str, Any] = {}
        for f in fields(cls):
            spec: Setting = f.metadata["setting"]
            given = overrides.pop(f.name, None)
            found = spec.lookup(env)
            if given is not None:
                # a command-line option's text is checked as its variable's, and named as given
                values[f.name] = spec.read(spec.flag or spec.names[0], given) if isinstance(given, str) else given
            elif found is not None:
                values[f.name] = spec.read(*found)
            elif spec.derive is not None:
                values[f.name] = spec.derive(values, env)
        return cls(**values)

    def uvicorn_options(self) -> UvicornOptions:
        """How uvicorn treats proxy headers: believed only from CORTEX_TRUSTED_PROXIES.

        uvicorn's own default trusts X-Forwarded-For from 127.0.0.1, which let any
        local client choose the address the sign-in throttle counts against.
        """
        if not self.trusted_proxies:
            return {"proxy_headers": False}
        return {"proxy_headers": True, "forwarded_allow_ips": ",".join(self.trusted_proxies)}

    def served_repository(self) -> Path:
        """The repository this configuration serves: CORTEX_REMOTE's clone in the state folder, else the brain."""
        return self.home / CLONE_NAME if self.remote else self.brain

    def hosts(self) -> list[str]:
        public = [self.public_url.split("://", 1)[1]] if self.public_url else []
        return DEFAULT_HOSTS + public + self.allowed_hosts

    def origins(self) -> list[str]:
        public = [self.public_url] if self.public_url else []
        return ["http://127.0.0.1:*", "http://localhost:*"] + public + self.allowed_origins


def read_setting(name: str, env: dict[str, str] | None = None) -> Any:
    """One setting (by field name) from `env` alone, read and checked as `from_env` reads it;
    its default (None when it has none) when unset. For code that needs one setting, not all."""
    f = next(f for f in fields(Settings) if f.name == name)
    spec: Setting = f.metadata["setting"]
    found = spec.lookup(dict(os.environ if env is None else env))
    if found is not None:
        return spec.read(*found)
    return None if f.default is MISSING else f.default


def settings_table() -> str:
    """The README's Configuration table, in Markdown: one row a setting, in declaration order."""
    rows = ["| setting | default | meaning |", "|---|---|---|"]
    for f in fields(Settings):
        spec: Setting = f.metadata["setting"]
        names = " / ".join(f"`{n}`" for n in ([spec.flag] if spec.flag else []) + list(spec.names))
        if spec.shown is not None:
            default = spec.shown
        elif f.default is None or f.default is MISSING:
            default = "—"
        else:
            default = f"`{f.default}`"
        rows.append(f"| {names} | {default} | {spec.doc} |")
    return "\n".join(rows) + "\n"


SECRET_FILES = {"token": "owner-token", "url_secret": "url-secret"}  # generated when the variable is unset


def read_secret_file(path: Path) -> str:
    """A secret kept in a file, refused (naming the file) when it is weak: someone wrote it by hand."""
    value = path.read_text().strip()
    why = weak_secret(value)
    if why:
        raise BadInput(f"{path} {why}; delete it, and Cortex makes a new one at the next start")
    return value


def load_or_make_secret(path: Path, nbytes: int = 32) -> tuple[str, bool]:
    """A secret kept in a 0600 file in the state folder; (secret, newly_made)."""
    if path.exists():
        return read_secret_file(path), False
    state_folder.make(path.parent)
    secret = secrets.token_urlsafe(nbytes)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(secret + "\n")
    return secret, True


def secret_in_effect(settings: Settings, name: str) -> str | None:
    """The door secret a server of `settings` uses (`token` or `url_secret`): its variable, else
    its file in the state folder, refused as a start refuses it when weak; None when neither is
    there yet (the first `cortex serve` makes the file)."""
    value: str | None = getattr(settings, name)
    if value:
        return value
    file = settings.home / SECRET_FILES[name]
    return read_secret_file(file) if file.exists() else None


HEADER_FILE = "owner-header"


def identity_proof(token: str, challenge: str, brain: Path) -> str:
    """What only the server of `brain` that holds `token` can answer to `challenge`: an HMAC of
    both under the owner token. `cortex stdio` checks it before the token crosses, so a
    listener that took the port, or the server of another brain, never sees the token.
    The message is prefixed for this use alone: the answer signs nothing else."""
    message = f"cortex-identity\n{challenge}\n{Path(brain).resolve()}".encode()
    return hmac.new(token.encode(), message, hashlib.sha256).hexdigest()


def keep_header_file(home: Path, token: str) -> Path:
    """`Authorization: Bearer <token>` in a 0600 file of the state folder, for clients that read
    their headers from a file (mcp-remote's `--header-file`): a config naming the file works
    after every start, and the token stays out of the config and the process list. Written
    when missing or when the owner token changed (a new CORTEX_TOKEN)."""
    path = home / HEADER_FILE
    line = f"Authorization: Bearer {token}\n".encode()
    try:
        if path.read_bytes() == line:
            return path
    except OSError:
        pass
    state_folder.make(home)
    write_atomic(path, line, mode=0o600)
    return path


PYTHON_FILE = "python"


def keep_python_file(home: Path) -> None:
    """The path of the Python that serves, in the state folder: the MCP Bundle's launcher runs
    it when the host's own `python3` lacks Cortex's dependencies (ops/bundle.py)."""
    import sys

    path = home / PYTHON_FILE
    line = f"{sys.executable}\n".encode()
    try:
        if path.read_bytes() == line:
            return
    except OSError:
        pass
    write_atomic(path, line, mode=0o600)


def check_door_secrets(settings: Settings) -> None:
    """Refuse, in one line naming both, two door secrets that are the same; a weak one in a file too.

    The variables are checked as they are read (`secret`); this adds the files in the state
    folder and the rule that no secret opens another's door. Makes nothing: `cortex serve`
    runs it before it binds, and the server again once the generated files exist. The state
    folder and its door files must be the owner's alone first (`state_folder.check`).
    """
    state_folder.check(settings.home)
    given: dict[str, str] = {}
    for f in fields(Settings):
        spec: Setting = f.metadata["setting"]
        value = getattr(settings, f.name)
        if spec.read is secret and value:
            given[spec.names[0]] = value
        elif f.name in SECRET_FILES and (settings.home / SECRET_FILES[f.name]).exists():
            given[str(settings.home / SECRET_FILES[f.name])] = read_secret_file(settings.home / SECRET_FILES[f.name])
    seen: dict[str, str] = {}
    for name, value in given.items():
        if value in seen:
            raise BadInput(f"{name} is the same as {seen[value]}; every secret must be different")
        seen[value] = name
