"""Client ID Metadata Documents: a `client_id` that is an HTTPS URL names a JSON document,
fetched here, that says the client's name and redirect URIs (draft-ietf-oauth-client-id-
metadata-document; the MCP spec's recommended registration since 2025-11-25).

The fetch is a request an outsider chooses, so it is held short:

- HTTPS only, port 443 or any, no user info, no fragment, a path that is not `/`;
- the host is resolved once and every address must be public: a private, loopback,
  link-local, shared, multicast, reserved or unspecified address is refused before any
  connection (the cloud metadata service at 169.254.169.254 included), and the connection is
  made to the address that was checked, so a second DNS answer cannot move it;
- 3 s in all, connect, headers and body together (a sender that trickles a byte a second
  is cut off at the deadline, not let run as long as each read gets one), no redirects
  followed, at most 64 KB read;
- at most `MAX_FETCHES` at once (more are refused at once, holding no worker), and a URL
  that failed is refused without a new fetch for `FAILED_SECONDS`;
- the document must be a JSON object whose `client_id` is the URL itself and that names
  at least one redirect URI.

Tests serve documents from 127.0.0.1 over plain HTTP: `Fetcher(allow_loopback=True)`, which
no setting or variable reaches.
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import json
import socket
import ssl
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "FAILED_SECONDS",
    "public_address",
    "MAX_DOCUMENT_BYTES",
    "MAX_FETCHES",
    "TIMEOUT",
    "DocumentRefused",
    "Fetcher",
    "is_document_url",
]

MAX_DOCUMENT_BYTES = 64 * 1024
TIMEOUT = 3.0
# Fetches at once: a stranger's slow documents hold at most this many of the server's worker
# threads (40), each for at most TIMEOUT; the owner's tools keep the rest.
MAX_FETCHES = 4
FAILED_SECONDS = 300.0  # a URL that failed is refused from memory this long
_FAILED_KEPT = 1024  # failures remembered at most (the oldest go first)


class DocumentRefused(Exception):
    """Why a client's metadata document was not used (one line, for the log)."""


def is_document_url(client_id: str) -> bool:
    """Whether a client_id names a metadata document rather than a registration here."""
    return client_id.startswith(("https://", "http://"))


# Ranges `ipaddress` does not call private but no public document lives in: shared address
# space (carrier NAT) and the IETF protocol assignments.
_NOT_PUBLIC_V4 = (ipaddress.IPv4Network("100.64.0.0/10"), ipaddress.IPv4Network("192.0.0.0/24"))


def public_address(address: str) -> bool:
    """Whether a metadata document may be fetched from `address`: no private, loopback,
    link-local, site-local, shared, multicast, reserved or unspecified address, nor one with
    such an IPv4 address inside it."""
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address):
        # An IPv4 address inside an IPv6 one is judged as itself: mapped (::ffff:a.b.c.d), 6to4
        # (2002:aabb:ccdd::) and Teredo's client; the deprecated site-local fec0::/10 is private.
        embedded = ip.ipv4_mapped or ip.sixtofour or (ip.teredo[1] if ip.teredo else None)
        if embedded is not None and not public_address(str(embedded)):
            return False
        if ip.ipv4_mapped is not None:
            return True
        if ip.is_site_local:
            return False
    return not (
        ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
        or (isinstance(ip, ipaddress.IPv4Address) and any(ip in net for net in _NOT_PUBLIC_V4))
    )


def _watch(conn: http.client.HTTPConnection, deadline: float, done: threading.Event) -> None:
    """From `deadline` until `done`, shut `conn`'s socket every 50 ms (it may still be
    connecting at first): every read and write on it ends."""
    while not done.wait(max(0.0, deadline - time.monotonic())):
        sock = conn.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        deadline = time.monotonic() + 0.05


class _Pinned(http.client.HTTPSConnection):
    """HTTPS to one checked address; the certificate is still checked against the host name."""

    def __init__(self, host: str, address: str, port: int, timeout: float, context: ssl.SSLContext):
        super().__init__(host, port, timeout=timeout, context=context)
        self._address = address
        self._tls = context

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._tls.wrap_socket(sock, server_hostname=self.host)


@dataclass
class Fetcher:
    allow_loopback: bool = False  # tests only: 127.0.0.1 and ::1, over plain HTTP too
    timeout: float = TIMEOUT
    clock: Any = time.monotonic
    _slots: threading.BoundedSemaphore = field(default_factory=lambda: threading.BoundedSemaphore(MAX_FETCHES))
    _failed: OrderedDict[str, tuple[float, str]] = field(default_factory=OrderedDict)
    _failed_lock: threading.Lock = field(default_factory=threading.Lock)

    def _addresses(self, host: str, port: int) -> list[str]:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            raise DocumentRefused(f"the host {host!r} does not resolve") from exc
        addresses = sorted({str(info[4][0]) for info in infos})
        for address in addresses:
            loopback = ipaddress.ip_address(address).is_loopback
            if not public_address(address) and not (self.allow_loopback and loopback):
                raise DocumentRefused(f"{host!r} resolves to {address}, a private, loopback or link-local address")
        if not addresses:
            raise DocumentRefused(f"the host {host!r} has no address")
        return addresses

    def check_url(self, url: str) -> tuple[str, str, int, str]:
        """(scheme, host, port, path?query) of a document URL that may be fetched; refused otherwise."""
        parts = urlsplit(url)
        loopback_http = self.allow_loopback and parts.scheme == "http" and parts.hostname in ("127.0.0.1", "::1")
        if parts.scheme != "https" and not loopback_http:
            raise DocumentRefused("a client_id document must be at an https:// URL")
        if not parts.hostname or parts.username or parts.password or parts.fragment:
            raise DocumentRefused("a client_id URL needs a host and no user name, password or fragment")
        if parts.path in ("", "/"):
            raise DocumentRefused("a client_id URL needs a path")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        return parts.scheme, parts.hostname, port, target

    def fetch(self, url: str) -> dict[str, Any]:
        """The document at `url`, checked; DocumentRefused with the reason otherwise (a URL
        that failed within FAILED_SECONDS gets its reason again, with no fetch)."""
        with self._failed_lock:
            failed = self._failed.get(url)
            if failed is not None and self.clock() - failed[0] < FAILED_SECONDS:
                raise DocumentRefused(f"{failed[1]} (at most once every {FAILED_SECONDS:g} s)")
        if not self._slots.acquire(blocking=False):
            raise DocumentRefused(f"{MAX_FETCHES} client_id documents are being fetched already; try again")
        try:
            return self._fetch(url)
        except DocumentRefused as exc:
            with self._failed_lock:
                self._failed[url] = (self.clock(), str(exc))
                self._failed.move_to_end(url)
                while len(self._failed) > _FAILED_KEPT:
                    self._failed.popitem(last=False)
            raise
        finally:
            self._slots.release()

    def _fetch(self, url: str) -> dict[str, Any]:
        scheme, host, port, target = self.check_url(url)
        address = self._addresses(host, port)[0]
        deadline = time.monotonic() + self.timeout
        if scheme == "https":
            conn: http.client.HTTPConnection = _Pinned(host, address, port, self.timeout, ssl.create_default_context())
        else:
            conn = http.client.HTTPConnection(address, port, timeout=self.timeout)
        # One deadline for connect, headers and body: a read that gets a byte now and then never
        # times out by itself, so at the deadline the socket is shut, which ends any read.
        done = threading.Event()
        threading.Thread(target=_watch, args=(conn, deadline, done), daemon=True).start()
        try:
            conn.request("GET", target, headers={"Host": urlsplit(url).netloc, "Accept": "application/json"})
            response = conn.getresponse()
            if response.status != 200:
                raise DocumentRefused(f"the client_id document answered HTTP {response.status}")
            body = b""
            while len(body) <= MAX_DOCUMENT_BYTES:
                if time.monotonic() > deadline:
                    raise DocumentRefused(f"the client_id document took more than {self.timeout:g} s")
                chunk = response.read(8192)
                if not chunk:
                    break
                body += chunk
            if len(body) > MAX_DOCUMENT_BYTES:
                raise DocumentRefused(f"the client_id document is larger than {MAX_DOCUMENT_BYTES // 1024} KB")
        except (OSError, http.client.HTTPException, ValueError) as exc:
            if time.monotonic() >= deadline:
                raise DocumentRefused(f"the client_id document took more than {self.timeout:g} s") from exc
            raise DocumentRefused(f"the client_id document could not be fetched ({exc.__class__.__name__})") from exc
        finally:
            done.set()
            conn.close()
        try:
            doc = json.loads(body)
        except ValueError as exc:
            raise DocumentRefused("the client_id document is not JSON") from exc
        if not isinstance(doc, dict) or doc.get("client_id") != url:
            raise DocumentRefused("the client_id document's client_id is not its own URL")
        if not isinstance(doc.get("redirect_uris"), list) or not doc["redirect_uris"]:
            raise DocumentRefused("the client_id document names no redirect_uris")
        return doc
