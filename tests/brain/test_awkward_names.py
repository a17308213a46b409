"""Links survive any name (issue 62): a note moved through every awkward name in turn, and back
to a plain one, keeps every link to it and from it, as brain_read's links and backlinks resolve
them after each move; a name a link could not hold is refused in one line and changes nothing.
A real Git repository, no server (as test_markdown_links)."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from vaultkit import note_text, tools_on

from cortex.brain.trailers import Actor
from cortex.errors import BadInput
from cortex.tools.read import ReadRequest, read
from cortex.tools.tool import Caller
from cortex.tools.toolset import Tools

ME = Actor("owner", "brain_write", "pytest")
OWNER = Caller(door="owner")
PLAN = "# Plan\n\n## Steps\n\nOne, two.\n\nSee [[other]], [the deep one](folder/deep.md) and [[Deep|deep]].\n"
# The notes linking to the plan, and how many links each has to it.
WIKI = {
    "other.md": ("# Other\n\n[[plan]] and [[plan#Steps|the plan]] and [[plan.md]].\n", 3),
    "folder/deep.md": (
        '# Deep\n\n[plan](../plan.md), [steps](../plan.md#Steps "The plan"), [angled](<../plan.md>).\n',
        3,
    ),
    "root.md": ("# Root\n\n| link | why |\n| --- | --- |\n| [from the root](/plan.md#Steps) | a table |\n", 1),
}
MARKDOWN = {
    "other.md": ('# Other\n\n[plan](plan.md) and [steps](plan.md#Steps "The plan") and [t](<plan.md>).\n', 3),
    "folder/deep.md": WIKI["folder/deep.md"],
    "root.md": WIKI["root.md"],
}
NFC = unicodedata.normalize("NFC", "ümlaut café.md")
NFD = unicodedata.normalize("NFD", "ümlaut café.md")
# Every awkward name, and what refuses it (None: the move is made).
NAMES = {
    "a#b (c).md": "wikilink",
    "x%20y.md": None,
    "[draft] plan.md": "wikilink",
    "100% done.md": None,
    "a|b.md": "Windows",
    NFC: None,
    NFD: None,
    "日本語 メモ.md": None,
    "日本語\u3000メモ.md": None,
    "sub dir/with space.md": None,
    "paren).md": None,
    "(paren.md": None,
    "angle<b>.md": "Windows",
    "caret^1.md": "wikilink",
    "a&amp;b {x} 'q'.md": None,
    "x%2520y.md": None,
}


def make(tmp_path: Path, linking: dict[str, tuple[str, int]]) -> Tools:
    return tools_on(tmp_path, {"plan.md": PLAN.encode()} | {p: t.encode() for p, (t, _) in linking.items()})


def assert_links_follow(tools: Tools, at: str, linking: dict[str, tuple[str, int]]) -> None:
    """Every link to the plan resolves to `at`, its headings kept, and the plan's own links
    still reach their notes, as brain_read resolves them."""
    here = read(tools, ReadRequest(path=at), OWNER)
    assert sorted((b["path"], b["links"]) for b in here["backlinks"]) == sorted(
        (p, n) for p, (_, n) in linking.items()
    ), at
    for source in linking:
        links = read(tools, ReadRequest(path=source), OWNER)["links"]
        assert links and all(x.get("path") == at for x in links), (at, source, links)
        assert any(x.get("heading") == "Steps" for x in links), (at, source, links)
    assert sorted(x.get("path", "missing") for x in here["links"]) == ["folder/deep.md", "folder/deep.md", "other.md"]
    assert '"The plan")' in note_text(tools.brain, "folder/deep.md")  # the title stays


def move(tools: Tools, path: str, to: str, linking: dict[str, tuple[str, int]]) -> str:
    """Move the plan from `path` to `to` (or see the move refused, nothing changed); where it is now."""
    brain = tools.brain
    head = brain.store.head()
    why = NAMES.get(to)
    if why == "wikilink" and linking is MARKDOWN:
        why = None  # only a [[wikilink]] cannot hold it: Markdown links escape it
    if why is None:
        reply = brain.write(path, "move", ME, to=to)
        assert reply["to"] == to
        assert_links_follow(tools, to, linking)
        return to
    with pytest.raises(BadInput) as refused:
        brain.write(path, "move", ME, to=to)
    said = str(refused.value)
    assert "\n" not in said and (why in said) and ("nothing was changed" in said or why == "Windows"), said
    assert brain.store.head() == head
    assert_links_follow(tools, path, linking)
    return path


@pytest.mark.parametrize("linking", [WIKI, MARKDOWN], ids=["wikilinks", "markdown"])
def test_every_link_follows_the_note_to_each_awkward_name_and_back(tmp_path: Path, linking) -> None:
    tools = make(tmp_path, linking)
    assert_links_follow(tools, "plan.md", linking)
    at = "plan.md"
    for name in NAMES:
        at = move(tools, at, name, linking)  # or refused, and still where it was
        at = move(tools, at, "notes/plan.md" if at == "plan.md" else "plan.md", linking)  # back to a plain name


def test_a_note_linked_by_markdown_links_goes_from_awkward_name_to_awkward_name(tmp_path: Path) -> None:
    tools = make(tmp_path, MARKDOWN)
    at = "plan.md"
    for name in [n for n, why in NAMES.items() if why != "Windows" and n != NFD] + [NFD, "notes/plan.md"]:
        at = move(tools, at, name, MARKDOWN)
    assert at == "notes/plan.md"
    assert "[plan](notes/plan.md) and [steps](notes/plan.md#Steps" in note_text(tools.brain, "other.md")
