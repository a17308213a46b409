"""Markdown links to notes (`[text](other.md)`, as Obsidian writes them with "Use [[Wikilinks]]"
off, and as most editors do) are links: brain_read's links and backlinks, a write's missing
links, and a move's rewrite, as for [[wikilinks]] (issue 55). A real Git repository, no server."""

from __future__ import annotations

from pathlib import Path

from vaultkit import note_text, tools_on

from cortex.brain.trailers import Actor
from cortex.notes.note import markdown_links
from cortex.tools.context import router_order
from cortex.tools.linking import dangling_reply
from cortex.tools.read import ReadRequest, read
from cortex.tools.tool import Caller
from cortex.tools.toolset import Tools

ME = Actor("owner", "brain_write", "pytest")
OWNER = Caller(door="owner")

MARKDOWN = {
    "tools/obsidian.md": b"# Obsidian\n\nThe editor.\n\n## Plugins\n\nDataview.\n",
    "tools/My Setup.md": b"# My setup\n\nUses [Obsidian](obsidian.md#Plugins).\n",
    "journal/2026-12-01.md": b"# Monday\n\nTried [the editor](../tools/obsidian.md) and [setup](../tools/My%20Setup.md).\r\n"
    b"Also [from the root](/tools/obsidian.md), [spaces](<../tools/My Setup.md>), ![a picture](../tools/obsidian.md), "
    b"[a site](https://example.org/x.md), `[code](../tools/obsidian.md)` and [gone](nowhere.md).\n",
    "Café/crème.md": "# Crème\n\nSee [Obsidian](../tools/obsidian.md).\n".encode(),
}
WIKI = {
    "tools/obsidian.md": MARKDOWN["tools/obsidian.md"],
    "tools/My Setup.md": b"# My setup\n\nUses [[obsidian#Plugins|Obsidian]].\n",
    "journal/2026-12-01.md": b"# Monday\n\nTried [[obsidian|the editor]] and [[My Setup|setup]].\n",
    "Café/crème.md": "# Crème\n\nSee [[obsidian]].\n".encode(),
}


def paths(tools: Tools, path: str, key: str) -> list[str]:
    return sorted(x["path"] for x in read(tools, ReadRequest(path=path), OWNER)[key] if "path" in x)


def test_only_links_to_notes_outside_code_count_and_each_resolves_from_its_folder() -> None:
    body = MARKDOWN["journal/2026-12-01.md"].decode()
    found = markdown_links(body, "journal/2026-12-01.md")
    assert [(x.target, x.heading) for x in found] == [
        ("/tools/obsidian.md", None),
        ("/tools/My Setup.md", None),
        ("/tools/obsidian.md", None),
        ("/tools/My Setup.md", None),
        ("/journal/nowhere.md", None),
    ]
    assert [body[x.start : x.end] for x in found] == [x.url for x in found]  # the span is the url as written
    assert markdown_links("[up](../../x.md) [a](b.md#Some%20Heading)", "n/a.md")[0].heading == "Some Heading"
    assert markdown_links("[out](../../x.md)", "n/a.md") == ()  # leaves the vault


def test_a_markdown_vault_has_the_links_and_backlinks_of_a_wikilink_vault(tmp_path: Path) -> None:
    md, wiki = tools_on(tmp_path / "md", MARKDOWN), tools_on(tmp_path / "wiki", WIKI)
    for path in WIKI:
        assert paths(md, path, "links") == paths(wiki, path, "links"), path
        assert paths(md, path, "backlinks") == paths(wiki, path, "backlinks"), path
    assert paths(md, "tools/obsidian.md", "backlinks") == [
        "Café/crème.md",
        "journal/2026-12-01.md",
        "tools/My Setup.md",
    ]
    links = read(md, ReadRequest(path="journal/2026-12-01.md"), OWNER)["links"]
    assert {"target": "nowhere.md", "alias": "gone", "missing": True} in links
    md.brain.write("notes/new.md", "create", ME, content="See [x](../tools/obsidian.md) and [y](../nope.md).\n")
    reply = dangling_reply(md.brain.snapshot(), "notes/new.md")
    assert reply["links_missing"] == ["../nope.md"] and "../nope.md" in reply["links_note"]


def test_the_router_orders_a_markdown_vault_as_a_wikilink_vault(tmp_path: Path) -> None:
    hub = {"profile.md": b"# Me\n\nMy tools: [Obsidian](tools/obsidian.md).\n"}
    wiki_hub = {"profile.md": b"# Me\n\nMy tools: [[obsidian|Obsidian]].\n"}
    md, wiki = tools_on(tmp_path / "md", {**MARKDOWN, **hub}), tools_on(tmp_path / "wiki", {**WIKI, **wiki_hub})
    md_snap, wiki_snap = md.brain.snapshot(), wiki.brain.snapshot()
    order = router_order(md_snap, sorted(md_snap.notes))
    assert order == router_order(wiki_snap, sorted(wiki_snap.notes))
    assert order.index("tools/obsidian.md") < order.index("tools/My Setup.md")  # the profile links it


def test_a_move_rewrites_markdown_links_to_the_note_and_from_it(tmp_path: Path) -> None:
    tools = tools_on(tmp_path, MARKDOWN)
    brain = tools.brain
    brain.write("tools/obsidian.md", "move", ME, to="apps/Obsidian app.md")
    files = {p: note_text(brain, p) for p in ("tools/My Setup.md", "journal/2026-12-01.md", "Café/crème.md")}
    assert "[Obsidian](../apps/Obsidian%20app.md#Plugins)" in files["tools/My Setup.md"]
    journal = files["journal/2026-12-01.md"]
    assert (
        "[the editor](../apps/Obsidian%20app.md)" in journal and "[from the root](/apps/Obsidian app.md)" not in journal
    )
    assert "[from the root](/apps/Obsidian%20app.md)" in journal
    assert "`[code](../tools/obsidian.md)`" in journal and "![a picture](../tools/obsidian.md)" in journal  # not links
    assert "[setup](../tools/My%20Setup.md).\r\n" in journal  # untouched, its line ending kept
    assert "[Obsidian](../apps/Obsidian%20app.md)" in files["Café/crème.md"]
    assert paths(tools, "apps/Obsidian app.md", "backlinks") == [
        "Café/crème.md",
        "journal/2026-12-01.md",
        "tools/My Setup.md",
    ]

    brain.write("tools/My Setup.md", "move", ME, to="setup/deep/My Setup.md")  # the linking note moves
    moved = note_text(brain, "setup/deep/My Setup.md")
    assert "[Obsidian](../../apps/Obsidian%20app.md#Plugins)" in moved
    assert "[spaces](<../setup/deep/My Setup.md>)" in note_text(brain, "journal/2026-12-01.md")
