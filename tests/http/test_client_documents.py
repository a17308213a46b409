"""A client's metadata document fetch holds nothing the owner needs (issue 42).

A sender that trickles a byte now and then never lets a per-read timeout fire: 45 such
`/authorize` requests pinned all 40 worker threads. Here a real trickling HTTP server on
loopback (under the test-only `allow_loopback`) feeds real fetches: one overall deadline ends
each, at most MAX_FETCHES run at once (the rest are refused at once), and a URL that failed
is refused from memory without a new connection.
"""

from __future__ import annotations

import concurrent.futures
import socket
import threading
import time

import httpx
import pytest
from oauthkit import Flow
from serverkit import call, serve

from cortex.http.client_documents import MAX_FETCHES, DocumentRefused, Fetcher


class Trickler:
    """An HTTP server that answers every connection with a byte every 50 ms, forever."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.open = 0
        self.most_open = 0
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, name: str = "client.json") -> str:
        return f"http://127.0.0.1:{self.port}/{name}"

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._trickle, args=(conn,), daemon=True).start()

    def _trickle(self, conn: socket.socket) -> None:
        with self._lock:
            self.connections += 1
            self.open += 1
            self.most_open = max(self.most_open, self.open)
        try:
            conn.recv(65536)
            for byte in b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + b"X" * 10_000_000:
                conn.sendall(bytes([byte]))
                time.sleep(0.05)
        except OSError:
            pass
        finally:
            conn.close()
            with self._lock:
                self.open -= 1


def _fetch_in_thread(fetcher: Fetcher, url: str, wait: float = 20.0) -> BaseException:
    out: list[BaseException] = []

    def run() -> None:
        try:
            fetcher.fetch(url)
        except BaseException as exc:  # the refusal is what the test looks at
            out.append(exc)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(wait)
    assert not t.is_alive(), "the fetch was still running"
    return out[0]


def test_a_trickled_document_ends_at_one_deadline_and_its_failure_is_remembered() -> None:
    trickler = Trickler()
    fetcher = Fetcher(allow_loopback=True, timeout=0.5)
    refused = _fetch_in_thread(fetcher, trickler.url())
    assert isinstance(refused, DocumentRefused) and "took more than 0.5 s" in str(refused), refused
    again = _fetch_in_thread(fetcher, trickler.url(), wait=1.0)
    assert isinstance(again, DocumentRefused) and "at most once every" in str(again)
    assert trickler.connections == 1  # remembered: no second connection


def test_at_most_max_fetches_run_at_once_and_the_rest_are_refused_at_once() -> None:
    trickler = Trickler()
    fetcher = Fetcher(allow_loopback=True, timeout=1.5)
    with concurrent.futures.ThreadPoolExecutor(MAX_FETCHES * 3) as pool:
        futures = [pool.submit(_fetch_in_thread, fetcher, trickler.url(f"c{i}.json")) for i in range(MAX_FETCHES * 3)]
        refusals = [str(f.result()) for f in futures]
    busy = [r for r in refusals if "being fetched already" in r]
    assert len(busy) >= MAX_FETCHES * 2 - 1 and trickler.most_open <= MAX_FETCHES, (refusals, trickler.most_open)


@pytest.mark.slow
def test_strangers_slow_documents_hold_no_worker_the_owner_needs(tmp_path, brain_path) -> None:
    trickler = Trickler()
    with serve(tmp_path, brain_path) as running:
        running.parts.oauth.provider.fetcher.allow_loopback = True
        url = f"{running.url}/mcp"

        def authorize(i: int) -> int:
            flow = Flow(running.url, client_id=trickler.url(f"c{i}.json"), redirect="http://127.0.0.1:9/cb")
            return flow.authorize().status_code

        with concurrent.futures.ThreadPoolExecutor(45) as pool:
            statuses = pool.map(authorize, range(45))
            listed = call(url, "brain_list")  # the owner, while 45 strangers wait on documents
            assert listed.error is None
            assert sorted(set(statuses)) == [400]
        assert trickler.most_open <= MAX_FETCHES
        assert httpx.get(f"{running.url}/healthz", timeout=10).status_code == 200
