"""The stamp attacks' server and its calls: one running server with a model reader (a scripted
stub), a real Redis and a guest, and brain_ask and brain_verify asked on every door at once.

Used by tests/ask/test_stamp_attacks.py and tests/ask/test_shown_doors.py.
"""

from __future__ import annotations

import contextlib

import pytest
from guestkit import need_redis
from readerkit import Scripted
from serverkit import TOKEN, URL_SECRET, RunningServer, call, make_settings

from cortex.app.brain_setup import init_brain
from cortex.app.server import assemble, make_app
from cortex.brain.trailers import Actor
from cortex.guests.policy import add_guest
from cortex.guests.queue import ProposalQueue
from cortex.guests.redis_process import RedisProcess

ME = Actor("owner", "brain_write", "pytest")


@contextlib.contextmanager
def serving(tmp_path, stub: Scripted, notes: dict[str, str]):
    """(owner door URL, guest door URL, secret-URL door URL) on one running server with a
    model reader (the `stub`) and a real Redis, `notes` (path -> text) written first, and a
    guest "alice" who may read notes/."""
    need_redis()
    brain_path = tmp_path / "brain.git"
    init_brain(brain_path, bare=True)
    redis = RedisProcess(tmp_path / "redis").start()
    patch = pytest.MonkeyPatch()
    patch.setenv("ANTHROPIC_BASE_URL", stub.url)
    settings = make_settings(tmp_path, brain_path, env={"REDIS_URL": redis.url, "ANTHROPIC_API_KEY": "sk-test-stub"})
    parts = assemble(settings)
    parts.queue = ProposalQueue(redis.url)
    for path, text in notes.items():
        parts.brain.write(path, "create", ME, content=text)
    _, secret, _ = add_guest(parts.brain, "alice", ["notes/"], daily_asks=1_000)  # the module asks ~150 times
    try:
        with RunningServer(make_app(parts), parts.settings) as running:
            yield f"{running.url}/mcp", f"{running.url}/g/{secret}/mcp", f"{running.url}/s/{URL_SECRET}/mcp"
    finally:
        parts.queue.close()
        redis.stop()
        patch.undo()


def own(text: str, name: str) -> str:
    """Each note names its own probe, so no quote is a stock phrase of several notes."""
    return text.replace("Heron probe", f"Heron probe {name}")


def ask_both(doors, stub, name: str, quote: str, answer: str, secret_door: bool = False) -> list[dict]:
    """brain_ask's replies on the owner's door and a guest's (and the secret-URL door)."""
    stub.script = (own(answer, name), f"notes/{name}.md", own(quote, name))
    owner, guest, secret = doors
    replies = []
    for url, token in ((owner, TOKEN), (guest, None), *(((secret, None),) if secret_door else ())):
        # The quote as the question: retrieval finds the note, and the attack is on the stamp.
        r = call(url, "brain_ask", token=token, question=own(quote, name) + "?")
        assert r.error is None, r.error
        replies.append(r.data)
    return replies


def verify_both(doors, path: str, quote: str, answer: str, name: str, **more) -> list[dict]:
    """brain_verify's replies on both trusted doors: the bearer's and the secret URL's."""
    owner, _, secret = doors
    replies = []
    for url, token in ((owner, TOKEN), (secret, None)):
        r = call(
            url,
            "brain_verify",
            token=token,
            answer=own(answer, name),
            citations=[{"path": path, "quote": own(quote, name)}],
            **more,
        )
        assert r.error is None, r.error
        replies.append(r.data)
    return replies


def stamped(replies: list[dict], stamp: str, reason: str, name: str) -> None:
    for reply in replies:
        assert reply["stamp"] == stamp, (name, reply["stamp"], reply["stamp_reason"])
        assert reason in reply["stamp_reason"], (name, reply["stamp_reason"])
