"""Attacks on a real `cortex serve` process: each asserts the exact refusal and that nothing was committed.

One family per finding of a security review: the sign-in throttle, bounded input, masking,
one guest against another, and what the public endpoints say.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import httpx
import pytest
from consolekit import owner
from reliakit import ServeProcess, initialize_body
from serverkit import TOKEN, call

from cortex.app.brain_setup import init_brain

pytestmark = pytest.mark.slow  # every test here takes 0.3 s or more

CSRF = re.compile(r'name="csrf" value="([^"]+)"')


@pytest.fixture
def serve(tmp_path: Path):
    """Start `cortex serve` on a fresh bare brain; `serve(env)` returns the running process."""
    running: list[ServeProcess] = []

    def start(env: dict[str, str] | None = None) -> ServeProcess:
        brain = tmp_path / "brain.git"
        if not brain.exists():
            init_brain(brain, bare=True)
        proc = ServeProcess(
            tmp_path / "home", brain, {"CORTEX_TOKEN": TOKEN, **(env or {})}, tmp_path / "bin", tmp_path / "serve.log"
        )
        proc.start()
        running.append(proc)
        return proc

    yield start
    for proc in running:
        proc.stop()


def commits(brain: Path) -> int:
    return int(
        subprocess.run(
            ["git", "rev-list", "--count", "main"], cwd=brain, capture_output=True, text=True, check=True
        ).stdout
    )


def sign_in(url: str, secret: str, headers: dict[str, str] | None = None) -> httpx.Response:
    c = httpx.Client(base_url=url, follow_redirects=False, timeout=30, headers=headers or {})
    form = c.get("/console/signin")
    return c.post("/console/signin", data={"csrf": CSRF.search(form.text).group(1), "secret": secret})


# -- 2. the sign-in throttle ------------------------------------------------------


def test_a_spoofed_forwarded_for_does_not_reset_the_throttle(serve):
    proc = serve({"CORTEX_CONSOLE_PASSCODE": "correct horse battery"})
    codes = [sign_in(proc.url, "wrong", {"X-Forwarded-For": f"10.0.0.{n}"}).status_code for n in range(8)]
    assert codes == [401] * 5 + [429] * 3
    # The right passcode from yet another "address" waits too: the address is the socket's.
    r = sign_in(proc.url, "correct horse battery", {"X-Forwarded-For": "10.9.9.9"})
    assert r.status_code == 429 and "from this address" in r.text
    assert sign_in(proc.url, TOKEN).status_code == 303  # the owner token is never locked out


def test_no_choice_of_address_gets_past_the_limit_across_addresses(serve):
    # Behind a trusted proxy every client has its own address; twenty failures an hour in all.
    proc = serve({"CORTEX_CONSOLE_PASSCODE": "correct horse battery", "CORTEX_TRUSTED_PROXIES": "127.0.0.1"})
    codes = [sign_in(proc.url, "guess", {"X-Forwarded-For": f"10.0.{n}.1"}).status_code for n in range(20)]
    assert codes == [401] * 20
    r = sign_in(proc.url, "correct horse battery", {"X-Forwarded-For": "10.1.1.1"})
    assert r.status_code == 429 and "from all addresses" in r.text and int(r.headers["retry-after"]) > 3000
    r = sign_in(proc.url, TOKEN, {"X-Forwarded-For": "10.1.1.1"})
    assert r.status_code == 303


def test_behind_a_trusted_proxy_one_guesser_does_not_lock_out_the_owner(serve):
    proc = serve({"CORTEX_CONSOLE_PASSCODE": "correct horse battery", "CORTEX_TRUSTED_PROXIES": "127.0.0.1"})
    for _ in range(6):
        sign_in(proc.url, "guess", {"X-Forwarded-For": "203.0.113.7"})
    assert sign_in(proc.url, "guess", {"X-Forwarded-For": "203.0.113.7"}).status_code == 429
    r = sign_in(proc.url, "correct horse battery", {"X-Forwarded-For": "198.51.100.2"})
    assert r.status_code == 303


# -- 3. bounded input ---------------------------------------------------------------


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_webhook_refuses_a_big_body_before_reading_it(serve, tmp_path):
    remote = tmp_path / "remote.git"
    init_brain(remote, bare=True)
    proc = serve({"CORTEX_REMOTE": str(remote), "CORTEX_WEBHOOK_SECRET": "hook-secret-for-tests-0123"})
    hook = f"{proc.url}/hooks/push"
    bad = {"X-Hub-Signature-256": "sha256=" + "0" * 64}
    assert httpx.post(hook, content=b"{}", headers=bad).status_code == 401
    before = rss_kb(proc.proc.pid)
    big = b"x" * (48 * 1024 * 1024)
    r = httpx.post(hook, content=big, headers=bad, timeout=60)
    assert r.status_code == 413 and "1048576" in r.text

    def chunks():  # no Content-Length: a chunked upload is counted as it arrives
        for _ in range(48):
            yield b"y" * (1024 * 1024)

    try:
        r = httpx.post(hook, content=chunks(), headers=bad, timeout=60)
        assert r.status_code == 413
    except httpx.HTTPError:
        pass  # the server answered 413 and closed while the client was still sending
    assert rss_kb(proc.proc.pid) - before < 8_000, "the body was read into memory"
    assert httpx.post(hook, content=b"x" * 1_048_577, headers=bad).status_code == 413
    assert httpx.post(hook, content=b"x" * 1_048_576, headers=bad).status_code == 401


@pytest.mark.parametrize(
    "after", ["-5:-5", "-1:0", "0:-1", "1:2:3", "abc", "", " 0:0", "0:0\n", "99:0", "0:99", "999999999999:0", "１:0"]
)
def test_corpus_cursors_are_validated_with_one_line(server, after):
    url = server.url + "/mcp"
    reply = call(url, "brain_corpus", paths=["profile.md", "projects/example-project.md"], after=after)
    if after == "":
        assert reply.error is None  # an empty cursor is the first page
        return
    assert reply.error and "\n" not in reply.error and "after" in reply.error, (after, reply.text)


def test_corpus_cursor_walks_every_part_and_ends(server):
    url = server.url + "/mcp"
    first = call(url, "brain_corpus", paths=["profile.md", "projects/example-project.md"])
    total = first.data["total_notes"]
    assert (
        call(url, "brain_corpus", paths=["profile.md", "projects/example-project.md"], after=f"{total}:0").data["notes"]
        == []
    )
    assert call(url, "brain_corpus", paths=["profile.md", "projects/example-project.md"], after=f"{total}:1").error


# -- 5. one guest must not affect another --------------------------------------------


def test_one_guest_cannot_fill_everyone_elses_queue(gserver):
    from guestkit import commit_count

    alice = gserver.guest("alice", ["notes/public/"], daily_proposals=1000)
    bob = gserver.guest("bob", ["notes/public/"], daily_proposals=1000)
    replies = [
        call(alice.url, "brain_propose", token=None, path=f"notes/public/a{n}.md", mode="create", content=f"# A{n}\n")
        for n in range(12)
    ]
    assert [r.error is None for r in replies] == [True] * 10 + [False] * 2
    assert replies[-1].error.endswith(
        "your share of the review queue is full: 10 of your proposals await "
        "the owner's review (limit 10); try again after the owner reviews them"
    )
    before = commit_count(gserver.brain)
    ok = call(bob.url, "brain_propose", token=None, path="notes/public/b.md", mode="create", content="# B\n")
    assert ok.error is None and commit_count(gserver.brain) == before
    assert len(gserver.queue.open()) == 11


def test_a_tombstone_tells_another_guest_only_that_the_owner_declined(gserver):
    alice = gserver.guest("alice", ["notes/public/"])
    mallory = gserver.guest("mallory", ["notes/public/"])
    first = call(alice.url, "brain_propose", token=None, path="notes/public/x.md", mode="create", content="# X\n")
    call(gserver.owner, "brain_reject", id=first.data["id"], reason="alice's private matter, see her email")
    again = call(mallory.url, "brain_propose", token=None, path="notes/public/x.md", mode="create", content="# X\n")
    assert again.error.endswith(
        "refused: the owner has declined this content for this path; change the content to propose again"
    )
    assert "alice" not in again.error and "private" not in again.error


def test_console_proposals_page_is_clipped(gserver):

    guest = gserver.guest("big", ["notes/public/"], daily_proposals=100)
    for n in range(5):
        big = f"# Big {n}\n\n" + ("lorem ipsum " * 87_000)[:1_040_000] + "\n"
        assert (
            call(
                guest.url, "brain_propose", token=None, path=f"notes/public/big{n}.md", mode="create", content=big
            ).error
            is None
        )
    console = owner(gserver.url)
    page = console.get("/console/proposals")
    assert page.status_code == 200 and len(page.content) < 100_000, len(page.content)
    assert page.text.count("more characters not shown") == 5
    one = console.get(f"/console/proposals/{gserver.queue.open()[0].id}")
    assert one.status_code == 200 and len(one.content) < 110_000 and "more characters not shown" in one.text


# -- 6. say no more than needed ------------------------------------------------------


def test_public_healthz_says_only_liveness_head_count_index_and_guest_door(serve, tmp_path):
    remote = tmp_path / "remote.git"
    init_brain(remote, bare=True)
    proc = serve({"CORTEX_REMOTE": str(remote)})
    public = httpx.get(f"{proc.url}/healthz").json()
    assert set(public) == {"ok", "sha", "index", "notes", "guest_door", "meaning", "meaning_notes"}, public
    assert str(remote) not in httpx.get(f"{proc.url}/healthz").text
    assert httpx.get(f"{proc.url}/healthz?detail=1").status_code == 401
    assert httpx.get(f"{proc.url}/healthz?detail=1", headers={"Authorization": "Bearer wrong"}).status_code == 401
    detail = httpx.get(f"{proc.url}/healthz?detail=1", headers={"Authorization": f"Bearer {TOKEN}"}).json()
    assert "remote" in detail and detail["sha"] == public["sha"]
    assert detail["meaning_reason"] == "CORTEX_MEANING=off"  # why, for the owner only


HOSTS = [
    ("127.0.0.1:8765", True),
    ("localhost:1", True),
    ("localhost", True),
    ("localhost:1.evil.example", False),
    ("localhost:evil", False),
    ("localhost:", False),
    ("localhost:123456", False),
    ("127.0.0.1:80.evil.example", False),
    ("evil.example", False),
    ("localhost.evil.example:80", False),
]


def test_host_allow_list_is_matched_exactly_on_every_door_and_the_console(serve):
    proc = serve()
    body = initialize_body()
    for host, ok in HOSTS:
        headers = {
            "Host": host,
            "Authorization": f"Bearer {TOKEN}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        }
        r = httpx.post(f"{proc.url}/mcp", json=body, headers=headers)
        assert (r.status_code == 200) == ok, (host, r.status_code, r.text[:100])
        if not ok:
            assert r.status_code == 421 and r.text == "Invalid Host header"
        page = httpx.get(f"{proc.url}/console/signin", headers={"Host": host})
        assert (page.status_code == 200) == ok, (host, page.status_code)


def test_an_origin_that_only_starts_like_an_allowed_one_is_refused(serve):
    proc = serve()
    body = initialize_body()
    for origin, status in [("http://localhost:1.evil.example", 403), ("http://localhost:3000", 200)]:
        r = httpx.post(
            f"{proc.url}/mcp",
            json=body,
            headers={
                "Origin": origin,
                "Authorization": f"Bearer {TOKEN}",
                "Accept": "application/json, text/event-stream",
            },
        )
        assert r.status_code == status, (origin, r.status_code)


def test_sign_out_survives_a_restart(serve, tmp_path):
    proc = serve()
    c = httpx.Client(base_url=proc.url, follow_redirects=False, timeout=30)
    form = c.get("/console/signin")
    assert c.post("/console/signin", data={"csrf": CSRF.search(form.text).group(1), "secret": TOKEN}).status_code == 303
    cookie = c.cookies.get("cortex_console")
    page = c.get("/console/guests")
    assert page.status_code == 200
    assert c.post("/console/signout", data={"csrf": CSRF.search(page.text).group(1)}).status_code == 303
    proc.stop()
    proc.start()
    replay = httpx.get(f"{proc.url}/console/proposals", cookies={"cortex_console": cookie}, follow_redirects=False)
    assert replay.status_code == 303 and replay.headers["location"] == "/console/signin"
