"""An existing vault served as it is, through a real server
and the MCP SDK's client: a move that rewrites [[links]] in one commit, a 400 KB hub
read in pages and by section, and a boot call that fits a client's context.

After each write, every file the write did not name keeps its exact bytes.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
from serverkit import RunningServer, acall, client, make_settings
from vaultkit import hub_note

from cortex.app.server import assemble, make_app
from cortex.store.git import GitStore
from cortex.tools.context import CONTEXT_REPLY_BYTES, MAX_CONTEXT_BYTES
from cortex.tools.corpus import CORPUS_REPLY_BYTES

pytestmark = pytest.mark.slow  # every test here takes 0.3 s or more

HUB = hub_note("Rust", 400_000)
# A heading deep inside the hub, for a one-section read.
HUB_SECTION = "Databases"

VAULT: dict[str, bytes] = {
    "notes/Creme brulee.md": (
        b"---\r\naliases: [Burnt cream]\r\n---\r\n# Cr\xc3\xa8me br\xc3\xbbl\xc3\xa9e\r\n\r\n"
        b"Custard under caramel. See [[Creme brulee#Top|this note]].\r\n"
    ),
    # BOM, CRLF, a tab, an alias and a heading in the link, no final newline.
    "Café/Menu du jour.md": (
        b"\xef\xbb\xbf# Menu\r\n\r\n-\tDessert: [[creme brulee|the custard]]\r\n"
        b"- Method: [[notes/Creme brulee#Steps]]\r\n- Code: `[[Creme brulee]]`"
    ),
    # LF, no final newline, an embed, a link inside a fence that must stay.
    "notes/plan.md": (
        b"# Plan\n\nServe ![[Creme brulee]] cold.\n\n```\n[[Creme brulee]]\n```\nOther: [[Reading list]]"
    ),
    "notes/Reading list.md": b"# Reading list\n\n- [[plan]]\n",
    # A link by alias: it resolves before the move (by the alias) and after (by the file name).
    "People/O'Brien, Pat.md": b"# Pat\n\nLikes [[Burnt cream]].\n",
    "lists/Rust libraries.md": HUB,
}


def all_files(store: GitStore, sha: str) -> dict[str, bytes]:
    return {p: store.blob_bytes(b) for p, b in store.entries(sha).items()}


def test_move_rewrites_links_in_one_commit_and_paging(tmp_path: Path):
    vault = tmp_path / "vault.git"
    GitStore.init(vault, VAULT, bare=True, message="import the vault")
    parts = assemble(make_settings(tmp_path, vault))
    store = parts.brain.store
    with RunningServer(make_app(parts), parts.settings) as server:

        async def go() -> None:
            async with client(f"{server.url}/mcp") as c:
                before_sha = store.head()
                before = all_files(store, before_sha)

                # -- move: links rewritten in the same commit -----------------
                r = await acall(
                    c, "brain_write", path="notes/Creme brulee.md", mode="move", to="desserts/Burnt cream.md"
                )
                assert r.error is None, r.error
                assert r.data["links_rewritten"] == ["Café/Menu du jour.md", "desserts/Burnt cream.md", "notes/plan.md"]
                after_sha = store.head()
                assert store.commit_info(after_sha).parents == (before_sha,)  # one commit
                assert "Links rewritten in: Café/Menu du jour.md" in store.commit_info(after_sha).message
                after = all_files(store, after_sha)
                assert after["Café/Menu du jour.md"] == (
                    b"\xef\xbb\xbf# Menu\r\n\r\n-\tDessert: [[Burnt cream|the custard]]\r\n"
                    b"- Method: [[desserts/Burnt cream#Steps]]\r\n- Code: `[[Creme brulee]]`"
                )
                assert after["notes/plan.md"] == (
                    b"# Plan\n\nServe ![[Burnt cream]] cold.\n\n```\n[[Creme brulee]]\n```\nOther: [[Reading list]]"
                )
                assert after["desserts/Burnt cream.md"] == VAULT["notes/Creme brulee.md"].replace(
                    b"[[Creme brulee#Top", b"[[Burnt cream#Top"
                )
                assert "notes/Creme brulee.md" not in after
                named = {
                    "notes/Creme brulee.md",
                    "desserts/Burnt cream.md",
                    "Café/Menu du jour.md",
                    "notes/plan.md",
                    "INDEX.md",
                }
                for path, data in before.items():
                    if path not in named:
                        assert after[path] == data, path  # untouched: the exact bytes

                # -- read: links and backlinks at the served SHA ---------------
                r = await acall(c, "brain_read", path="desserts/Burnt cream.md")
                assert r.data["sha"] == after_sha and r.data["aliases"] == ["Burnt cream"]
                assert [b["path"] for b in r.data["backlinks"]] == [
                    "Café/Menu du jour.md",
                    "People/O'Brien, Pat.md",
                    "notes/plan.md",
                ]
                r = await acall(c, "brain_read", path="notes/Creme brulee.md", as_of=before_sha)
                assert [b["path"] for b in r.data["backlinks"]] == [
                    "Café/Menu du jour.md",
                    "People/O'Brien, Pat.md",
                    "notes/plan.md",
                ]

                # -- the 400 KB hub, in pages ----------------------------------
                pages, page = [], 1
                while True:
                    r = await acall(c, "brain_read", path="lists/Rust libraries.md", page=page, as_of=after_sha)
                    assert r.error is None, r.error
                    size = len(json.dumps(r.data, ensure_ascii=False).encode())
                    assert size <= CORPUS_REPLY_BYTES, size
                    pages.append(r.data)
                    if "next_page" not in r.data:
                        break
                    assert f"page={page + 1}" in r.data["more"] and after_sha in r.data["more"]
                    page = r.data["next_page"]
                n = len(pages)
                assert n >= 5 and pages[0]["page"] == f"1 of {n}"
                assert "".join(p["text"] for p in pages).encode() == HUB
                assert "frontmatter" in pages[0] and "frontmatter" not in pages[1]
                r = await acall(c, "brain_read", path="lists/Rust libraries.md", page=n + 1)
                assert r.error and f"has {n} page(s)" in r.error

                # -- one section -----------------------------------------------
                r = await acall(c, "brain_read", path="lists/Rust libraries.md", heading=HUB_SECTION)
                assert r.error is None and r.data["text"].startswith(f"## {HUB_SECTION}\n")
                assert r.data["text"].count("\n## ") == 0 and "page" not in r.data
                assert r.data["text"] in HUB.decode()
                r = await acall(c, "brain_read", path="lists/Rust libraries.md", heading="Nope")
                assert r.error and "its headings:" in r.error

                assert all_files(store, store.head()) == after  # reads changed nothing

        asyncio.run(go())


def test_boot_context_of_a_700_note_import(tmp_path: Path):
    files = {
        f"notes/topic-{i:03d}.md": (
            f"---\ndescription: What I know about topic {i}, "
            f"with a longer description than most\ntags: [t{i % 7}]\n---\n"
            f"# Topic {i}\n\nText {i}.\n"
        ).encode()
        for i in range(700)
    }
    files["profile.md"] = b"# Me\n\nI care about [[topic-650]] most.\n"
    files["projects/garden.md"] = b"# Garden\n\n## Status\n\nSee [[topic-600]].\n"
    vault = tmp_path / "vault.git"
    GitStore.init(vault, files, bare=True, message="import 702 notes")
    parts = assemble(make_settings(tmp_path, vault))
    with RunningServer(make_app(parts), parts.settings) as server:

        async def go() -> None:
            async with client(f"{server.url}/mcp") as c:
                r = await acall(c, "brain_write", path="notes/topic-001.md", mode="append", content="More.")
                assert r.error is None
                r = await acall(c, "brain_context")
                size = len(json.dumps(r.data, ensure_ascii=False).encode())
                assert size <= CONTEXT_REPLY_BYTES, size
                router = r.data["router"]
                # The one note really changed since the import leads, dated; then the project
                # and what the profile and projects link to (most linked first); the rest by
                # path, undated: the import is no change of theirs.
                assert router[0].startswith("notes/topic-001.md")
                assert re.search(r" · \d{4}-\d{2}-\d{2}$", router[0])
                assert [row.split(" · ")[0] for row in router[1:4]] == [
                    "notes/topic-600.md",
                    "notes/topic-650.md",
                    "projects/garden.md",
                ]
                assert router[4].startswith("notes/topic-000.md")
                assert not any(re.search(r"\d{4}-\d{2}-\d{2}$", row) for row in router[1:])
                left = int(r.data["router_left_out"].split()[0])
                assert left == 701 - len(router) and "budget=" in r.data["router_left_out"]
                big = await acall(c, "brain_context", budget=60_000)
                assert len(json.dumps(big.data, ensure_ascii=False).encode()) <= 60_000
                assert len(big.data["router"]) > 3 * len(router)
                huge = await acall(c, "brain_context", budget=10**9)
                assert len(json.dumps(huge.data, ensure_ascii=False).encode()) <= MAX_CONTEXT_BYTES
                bad = await acall(c, "brain_context", budget=10)
                assert bad.error and "budget" in bad.error

        asyncio.run(go())
