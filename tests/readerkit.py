"""A scripted model reader for attack suites: the Messages API stub answers what a test
scripts, citing quotes of one note, so a test attacks the stamp and not the reader."""

from __future__ import annotations

import pytest

from cortex.app.eval_doubles import StubMessagesServer, unpack


class Scripted(StubMessagesServer):
    """The Messages API stub: answers `answer`, citing each of `quotes` (one quote or a
    list) from the note at `path`, when the pack holds that note."""

    def __init__(self):
        self.script: tuple[str, str, str | list[str]] = ("", "", "")
        super().__init__(self.reply)

    def reply(self, body: dict) -> tuple[int, dict]:
        answer, path, quotes = self.script
        tags = {p: tag for p, _, tag, _ in unpack(body["messages"][0]["content"])[0]}
        cited = [quotes] if isinstance(quotes, str) else list(quotes)
        citations = [{"tag": tags[path], "quote": q} for q in cited] if path in tags else []
        return self.tool_reply({"answer": answer, "citations": citations, "not_in_brain": not citations})


@pytest.fixture(scope="module")
def stub():
    """One scripted reader for a module's tests; each test sets `stub.script`."""
    s = Scripted()
    yield s
    s.close()
