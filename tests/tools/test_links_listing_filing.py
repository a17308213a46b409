"""Finding notes through a real server and the MCP SDK's client: links by title (a write
says which of its links point nowhere; brain_handoff finds the note a title names), the
nearest paths for a mistyped one, a folder's listing (brain_list, paged), a search prefix
that starts no path, and brain_working's todo filed into a note in one commit."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from serverkit import acall, client, serve

from cortex.tools.listing import LIST_REPLY_BYTES

pytestmark = pytest.mark.slow  # each starts a server

DECISION = "# Billing service database decision\n\nWe keep billing on Postgres 16.\n"
PAGE = "# Billing\n\nThe decision: [[Billing service database decision]].\n"


def run(tmp_path: Path, brain_path: Path, body) -> None:
    with serve(tmp_path, brain_path) as server:

        async def go() -> None:
            async with client(f"{server.url}/mcp") as c:
                await body(c)

        asyncio.run(go())


def test_a_link_by_title_resolves_and_a_dangling_one_is_named_in_the_write(tmp_path: Path, brain_path: Path):
    async def body(c):
        r = await acall(c, "brain_write", path="notes/billing-db.md", mode="create", content=DECISION)
        assert r.error is None and "links_missing" not in r.data
        r = await acall(c, "brain_write", path="projects/billing.md", mode="create", content=PAGE)
        assert r.error is None, r.error
        assert "links_missing" not in r.data and "links_note" not in r.data  # the title names the note
        r = await acall(c, "brain_read", path="projects/billing.md")
        assert r.data["links"] == [
            {"target": "Billing service database decision", "path": "notes/billing-db.md", "resolved_by": "title"}
        ]
        r = await acall(c, "brain_read", path="notes/billing-db.md")
        assert r.data["backlinks"] == [{"path": "projects/billing.md", "links": 1}]
        r = await acall(c, "brain_handoff", project="billing")
        assert r.error is None, r.error
        assert "notes/billing-db.md" in r.text  # the linked note, found by its title

        r = await acall(
            c,
            "brain_write",
            path="notes/todo.md",
            mode="create",
            content="See [[Nowhere at all]] and [[billing-db]].\n",
        )
        assert r.error is None, r.error  # written all the same
        assert r.data["links_missing"] == ["Nowhere at all"]
        assert "1 link(s) of notes/todo.md point to no note: [[Nowhere at all]]" in r.data["links_note"]
        r = await acall(c, "brain_write", path="notes/todo.md", mode="append", content="\nAnd [[Also missing]].\n")
        assert r.data["links_missing"] == ["Nowhere at all", "Also missing"]

    run(tmp_path, brain_path, body)


def test_a_mistyped_path_gets_the_nearest_and_a_folder_its_listing(tmp_path: Path, brain_path: Path):
    async def body(c):
        r = await acall(c, "brain_write", path="notes/vitamin-d.md", mode="create", content="# Vitamin D\n\n1000 IU.\n")
        assert r.error is None, r.error
        for asked in ("notes/vitamin_d.md", "notes/vitamin-d", "Vitamin D", "notes/Vitamin-D.md"):
            r = await acall(c, "brain_read", path=asked)
            assert r.error is not None and "did you mean notes/vitamin-d.md?" in r.error, (asked, r.error)
            assert "\n" not in r.error
        r = await acall(c, "brain_read", path="zzzz-nothing.md")
        assert "no note at zzzz-nothing.md" in r.error and "did you mean" not in r.error

        for asked in ("notes/", "notes"):
            r = await acall(c, "brain_read", path=asked)
            assert r.error is None, r.error
            assert r.data["folder"] == "notes/" and "is a folder" in r.data["note"]
            assert {
                "path": "notes/vitamin-d.md",
                "uri": "cortex://note/notes/vitamin-d.md",
                "title": "Vitamin D",
                "status": "current",
            } in r.data["entries"]

        r = await acall(c, "brain_search", query="vitamin", prefix="note/")
        assert r.data["total"] == 0
        assert (
            r.data["prefix_note"] == "no note path starts with 'note/', so nothing was searched; did you mean notes/?"
        )
        r = await acall(c, "brain_search", query="vitamin", prefix="notes/")
        assert "prefix_note" not in r.data and r.data["hits"][0]["path"] == "notes/vitamin-d.md"

        r = await acall(c, "brain_list", folder="note")
        assert r.error is not None and "no folder note/" in r.error and "did you mean notes/?" in r.error

    run(tmp_path, brain_path, body)


def test_brain_list_pages_a_large_folder_and_says_what_it_left_out(tmp_path: Path, brain_path: Path):
    async def body(c):
        long_title = "A title that is long enough to fill a listing " * 3
        for i in range(140):
            text = f"# {long_title}{i}\n\nNote {i}.\n"
            r = await acall(c, "brain_write", path=f"big/n{i:03d}.md", mode="create", content=text)
            assert r.error is None, r.error
        await acall(c, "brain_write", path="big/sub/deep.md", mode="create", content="# Deep\n")

        top = await acall(c, "brain_list")
        assert {"folder": "big/", "files": 141} in top.data["entries"]

        seen: list[str] = []
        r = await acall(c, "brain_list", folder="big/")
        sha = r.data["sha"]
        assert r.data["entries"][0] == {"folder": "big/sub/", "files": 1}
        pages = 0
        while True:
            pages += 1
            assert len(r.text.encode()) <= LIST_REPLY_BYTES
            seen += [e.get("folder") or e["path"] for e in r.data["entries"]]
            if "next" not in r.data:
                break
            assert "more entries of big/ not listed" in r.data["more"] and f"as_of={sha}" in r.data["more"]
            r = await acall(c, "brain_list", folder="big/", after=r.data["next"], as_of=sha)
            assert r.error is None, r.error
        assert pages > 1
        assert seen == ["big/sub/"] + [f"big/n{i:03d}.md" for i in range(140)]  # each once, in order
        r = await acall(c, "brain_list", folder="big/", after="big/nope.md")
        assert r.error is not None and "after must be an entry of big/" in r.error

    run(tmp_path, brain_path, body)


def test_a_todo_is_filed_into_its_note_under_a_heading_in_one_commit(tmp_path: Path, brain_path: Path):
    async def body(c):
        await acall(c, "brain_write", path="notes/kiln.md", mode="create", content="# Kiln\n\n## To do\n\n- [ ] old\n")
        added = await acall(c, "brain_working", action="add", kind="todo", text="Order cone 6 packs", project="kiln")
        assert added.error is None, added.error
        listed = await acall(c, "brain_working", action="list", project="kiln")
        assert [(i["kind"], i["text"]) for i in listed.data["items"]] == [("todo", "Order cone 6 packs")]
        before = await acall(c, "brain_history", limit=1)

        r = await acall(c, "brain_working", action="file", id=added.data["id"], into="notes/kiln.md")
        assert r.error is None, r.error
        assert r.data["filed_into"] == "notes/kiln.md" and r.data["heading"] == "To do"
        commits = (await acall(c, "brain_history", limit=2)).data["commits"]
        assert commits[1]["sha"] == before.data["sha"]  # one commit since the head before
        assert sorted(commits[0]["files"]) == ["notes/kiln.md", "working/kiln.md"]  # holding both files
        note = await acall(c, "brain_read", path="notes/kiln.md")
        assert note.data["text"].startswith("# Kiln\n\n## To do\n\n- [ ] old\n- [ ] Order cone 6 packs (filed from ")

        d = await acall(c, "brain_working", action="add", kind="decision", text="Fire on Fridays", project="kiln")
        r = await acall(c, "brain_working", action="file", id=d.data["id"], into="notes/kiln.md", heading="Log")
        assert r.error is None and r.data["heading"] == "Log"
        note = await acall(c, "brain_read", path="notes/kiln.md")
        assert "\n## Log\n\n- Fire on Fridays (filed from working/kiln.md on " in note.data["text"]

        q = await acall(c, "brain_working", action="add", kind="question", text="Which shelf?", project="kiln")
        head = (await acall(c, "brain_history", limit=1)).data["sha"]
        r = await acall(c, "brain_working", action="file", id=q.data["id"], into="notes/kil.md")
        assert r.error is not None and "did you mean notes/kiln.md?" in r.error
        assert (await acall(c, "brain_history", limit=1)).data["sha"] == head  # refused: nothing changed

    run(tmp_path, brain_path, body)
