"""What an anonymous party can make the OAuth door keep is bounded (issue 42).

Registration is open, so: a registration's size and each field's length are capped, one
address registers at most REGISTRATIONS_PER_HOUR times an hour, consent requests waiting are
capped per client and in all (the oldest goes first), and the console revokes every client
unused for a chosen period in one action. The records file is written by a writer thread as a
log of changes, folded into a snapshot once it outgrows it, never rewritten whole on the event
loop; a restart replays it.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import httpx
import pytest
from consolekit import csrf_of, owner
from oauthkit import Flow
from serverkit import serve

from cortex.http import oauth, oauth_records
from cortex.http.oauth_records import FileRecords

REDIRECT = "http://127.0.0.1:9/callback"


def _register(base: str, **fields) -> httpx.Response:
    body = {"redirect_uris": [REDIRECT], "client_name": "A client", "token_endpoint_auth_method": "none", **fields}
    return httpx.post(f"{base}/register", json=body, timeout=30)


@pytest.mark.slow
def test_oversized_registrations_are_refused_and_nothing_is_kept(tmp_path: Path, brain_path: Path) -> None:
    with serve(tmp_path, brain_path) as running:
        for fields, words in [
            ({"client_name": "x" * 3_900_000}, "at most 8 KB"),
            ({"client_name": "x" * 2500}, "the field client_name is longer than 2000"),
            ({"redirect_uris": [f"http://127.0.0.1:9/cb{i}" for i in range(11)]}, "at most 10 redirect URIs"),
        ]:
            r = _register(running.url, **fields)
            assert r.status_code == 400 and words in r.json()["error_description"], r.text[:300]
        assert running.parts.oauth.provider.clients() == []


@pytest.mark.slow
def test_one_address_registers_at_most_ten_times_an_hour(tmp_path: Path, brain_path: Path) -> None:
    with serve(tmp_path, brain_path) as running:
        codes = [_register(running.url).status_code for _ in range(oauth.REGISTRATIONS_PER_HOUR)]
        assert codes == [201] * oauth.REGISTRATIONS_PER_HOUR
        r = _register(running.url)
        assert r.status_code == 429 and int(r.headers["Retry-After"]) > 0, r.text
        assert len(running.parts.oauth.provider.clients()) == oauth.REGISTRATIONS_PER_HOUR


@pytest.mark.slow
def test_waiting_consents_are_capped_per_client_oldest_first(tmp_path: Path, brain_path: Path) -> None:
    with serve(tmp_path, brain_path) as running:
        flow = Flow(running.url)
        flow.register()
        first = flow.authorize().headers["location"]
        for _ in range(oauth.MAX_PENDING_PER_CLIENT + 2):
            assert flow.authorize().status_code == 302
        waiting = running.parts.oauth.provider.records.scan("pending:")
        assert len(waiting) == oauth.MAX_PENDING_PER_CLIENT
        assert first.split("request=")[1] not in {k.split(":", 1)[1] for k, _ in waiting}  # the oldest went


@pytest.mark.slow
def test_the_console_revokes_every_unused_client_in_one_action(tmp_path: Path, brain_path: Path) -> None:
    with serve(tmp_path, brain_path) as running:
        for _ in range(5):
            assert _register(running.url).status_code == 201
        console = owner(running.url)
        page = console.get("/console/clients")
        assert "Revoke unused" in page.text
        bad = console.post("/console/clients/revoke-unused", data={"csrf": csrf_of(page.text), "days": "3"})
        assert bad.status_code == 400
        kept = console.post("/console/clients/revoke-unused", data={"csrf": csrf_of(page.text), "days": "1"})
        assert kept.status_code == 200 and "0 client(s) not used for 1 day revoked" in kept.text
        done = console.post("/console/clients/revoke-unused", data={"csrf": csrf_of(page.text), "days": "0"})
        assert done.status_code == 200 and "5 client(s) not used ever revoked" in done.text
        assert running.parts.oauth.provider.clients() == []
        no_csrf = console.post("/console/clients/revoke-unused", data={"days": "0"})
        assert no_csrf.status_code == 403


def test_records_are_a_log_written_off_the_callers_thread_and_replayed(tmp_path: Path, monkeypatch) -> None:
    writers: set[str] = set()
    real_fsync = os.fsync
    monkeypatch.setattr(
        oauth_records.os, "fsync", lambda fd: (writers.add(threading.current_thread().name), real_fsync(fd))[1]
    )
    path = tmp_path / "home" / "oauth.json"
    records = FileRecords(path)
    records.put("client:a", {"n": 1})
    records.put("code:x", {"n": 2}, ttl=300)
    records.claim("code:x")
    records.delete("client:a")
    assert records.flush()
    assert writers == {"cortex-oauth-records"}  # never the caller's (the event loop's) thread
    assert not path.exists() and len(path.with_name("oauth.json.log").read_text().splitlines()) == 4
    with open(path.with_name("oauth.json.log"), "ab") as f:
        f.write(b'["client:torn", null, {"n"')  # a crash mid-append
    records.close()
    again = FileRecords(path)
    assert again.get("client:a") is None and again.get("code:x") == {"n": 2, "used": True}
    assert again.get("client:torn") is None
    again.close()


def test_the_log_is_folded_into_the_snapshot_once_it_outgrows_it(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(oauth_records, "COMPACT_BYTES", 2000)
    path = tmp_path / "oauth.json"
    records = FileRecords(path)
    for i in range(200):
        records.put(f"client:{i % 5}", {"n": i})
    assert records.flush()
    snapshot = json.loads(path.read_text())
    log_size = path.with_name("oauth.json.log").stat().st_size
    assert set(snapshot) <= {f"client:{i}" for i in range(5)} and log_size <= 4000
    records.close()
    again = FileRecords(path)
    assert [again.get(f"client:{i}") for i in range(5)] == [{"n": 195 + i} for i in range(5)]
    again.close()
