"""Working state: open items in working/<project>.md, carried from one client to the next.

The format is pure and tested without I/O first; then the brain (commits, ages from Git
with an injected clock), then two real MCP clients of different SDKs over real HTTP.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import json
import re
from pathlib import Path

import pytest
from consolekit import csrf_of, owner
from hypothesis import given, settings
from hypothesis import strategies as st
from serverkit import TOKEN, call, list_tools, serve, ts_call

from cortex.brain.brain import Brain
from cortex.brain.trailers import Actor
from cortex.brain.working_state import Working
from cortex.guests.policy import PolicyError, check_scope
from cortex.notes.working import WorkingError, add, change, derived_id, parse_items, project_of, project_path
from cortex.store.git import GitStore
from cortex.tools.handoff import project_handoff

DAY = dt.date(2026, 12, 1)
A = Actor(door="owner", tool="brain_working", client="agent-a 1")


# -- the format ---------------------------------------------------------------------------


def test_an_added_item_is_one_line_with_kind_text_day_and_id():
    text = add(None, "kiln", "question", "Which cone does the new clay body need?", DAY, "w3ab7")
    assert text.endswith("- [ ] question: Which cone does the new clay body need? · opened 2026-12-01 ^w3ab7\n")
    [item] = parse_items(text, "kiln")
    assert (item.id, item.kind, item.state, item.opened) == ("w3ab7", "question", "open", DAY)


def test_lines_written_by_hand_are_read_back():
    text = (
        "# Working: kiln\n\n"
        "- [ ] call the kiln tech about the relay?\n"
        "- [x] order more cones\n"
        "- [x] focus: glaze tests · opened 2026-11-20 · filed 2026-12-01 → notes/glaze.md ^wq1e0\n"
        "- [-] decision: a second kiln · opened 2026-11-18 · dropped 2026-12-01: no room ^w9zz2\n"
        "* [ ] handoff: pick up the firing log · opened 2026-11-30 ^wh001\n"
    )
    items = {i.text: i for i in parse_items(text, "kiln")}
    relay = items["call the kiln tech about the relay?"]
    assert (relay.kind, relay.state, relay.written_id) == ("question", "open", False)
    assert relay.id == derived_id("kiln", "call the kiln tech about the relay?")
    assert items["order more cones"].state == "done"
    assert (items["glaze tests"].state, items["glaze tests"].into) == ("filed", "notes/glaze.md")
    assert (items["a second kiln"].state, items["a second kiln"].reason) == ("dropped", "no room")
    assert items["pick up the firing log"].kind == "handoff"


def test_list_lines_in_code_frontmatter_or_comments_are_no_items():
    text = (
        "---\nproject: kiln\n---\n# Kiln\n\n```\n- [ ] focus: inside a fence ^wfen1\n```\n\n"
        "<!--\n- [ ] focus: inside a comment ^wcom1\n-->\n\n- [ ] focus: real ^wrea1\n"
    )
    assert [i.id for i in parse_items(text, "kiln")] == ["wrea1"]
    [item] = parse_items(text, "kiln")
    assert text.splitlines()[item.line].endswith("^wrea1")


def test_a_change_rewrites_only_its_own_line_and_keeps_crlf_and_the_id():
    text = "# Working\r\n\r\n- [ ] focus: one · opened 2026-12-01 ^wone1\r\n- [ ] two, by hand\r\n"
    new, item = change(text, "wone1", "kiln", lambda i: dataclasses.replace(i, state="dropped", closed=DAY, reason="r"))
    assert (
        new
        == "# Working\r\n\r\n- [-] focus: one · opened 2026-12-01 · dropped 2026-12-01: r ^wone1\r\n- [ ] two, by hand\r\n"
    )
    hand = derived_id("kiln", "two, by hand")
    new2, _ = change(new, hand, "kiln", lambda i: dataclasses.replace(i, touched=DAY))
    assert new2.endswith(f"- [ ] focus: two, by hand · touched 2026-12-01 ^{hand}\r\n")  # the id is now written


@pytest.mark.parametrize(
    "kind, text, said",
    [
        ("wish", "x", "kind must be one of"),
        ("focus", "   ", "empty"),
        ("focus", "x" * 501, "longer than 500"),
        ("focus", "ends in an id ^abc1", "block id"),
        ("focus", "a · b", "separates"),
    ],
)
def test_bad_items_are_refused_in_one_line(kind, text, said):
    with pytest.raises(WorkingError, match=said):
        add(None, "kiln", kind, text, DAY, "w0000")


def test_project_keys_name_files_and_nothing_else():
    assert project_path("Kiln") == "working/kiln.md" and project_path(None) == "working/general.md"
    assert project_of("working/kiln.md") == "kiln" and project_of("working/a/b.md") is None
    for bad in ("../x", "a/b", "-x", "x" * 65, "a b"):
        with pytest.raises(WorkingError):
            project_path(bad)


# A property: any sequence of adds, files, drops, touches and hand edits loses no item and changes no id.

OPS = st.lists(
    st.tuples(st.sampled_from(["add", "file", "drop", "touch", "tick", "retext", "hand"]), st.integers(0, 50)),
    max_size=25,
)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(OPS)
def test_no_sequence_of_changes_loses_an_item_or_changes_its_id(ops):
    text = add(None, "kiln", "focus", "first", DAY, "w0000")
    known: set[str] = {"w0000"}
    for n, (op, pick) in enumerate(ops):
        items = parse_items(text, "kiln")
        target = items[pick % len(items)]
        if op == "add":
            text = add(text, "kiln", "question", f"item {n}?", DAY, f"w{n:04d}x")
        elif op == "hand":
            text += f"- [ ] written by hand {n}\n"
        elif op == "tick":  # the owner ticks a line in an editor
            lines = text.splitlines(keepends=True)
            lines[target.line] = lines[target.line].replace("- [ ]", "- [x]", 1)
            text = "".join(lines)
        elif op == "retext" and target.written_id:  # the owner rewords an item, leaving its id
            lines = text.splitlines(keepends=True)
            lines[target.line] = re.sub(r": [^·^]*", f": reworded {n} ", lines[target.line], count=1)
            text = "".join(lines)
        elif op in ("file", "drop", "touch") and target.open:
            edits = {
                "file": lambda i: dataclasses.replace(i, state="filed", closed=DAY, into="notes/x.md"),
                "drop": lambda i: dataclasses.replace(i, state="dropped", closed=DAY, reason="why"),
                "touch": lambda i: dataclasses.replace(i, touched=DAY),
            }
            text, _ = change(text, target.id, "kiln", edits[op])
        after = parse_items(text, "kiln")
        ids = [i.id for i in after if i.written_id]
        assert len(after) >= len(items), op
        assert known <= set(ids), op
        assert len(ids) == len(set(ids))
        known |= set(ids)


# -- over a brain: one commit a change, ages from Git --------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.UTC)

    def __call__(self) -> dt.datetime:
        return self.now


@pytest.fixture
def clocked(brain_path: Path):
    clock = Clock()
    brain = Brain(GitStore(brain_path), clock=clock)
    brain.write("notes/clay.md", "create", A, content="# Clay\n\nCone 6 stoneware.\n")
    return brain, clock, Working(brain)


def test_an_item_untouched_for_15_days_reads_as_aged_and_touching_it_renews_it(clocked):
    brain, clock, working = clocked
    added = working.act(A, "add", kind="focus", text="Fire the glaze tests", project="kiln")
    clock.now += dt.timedelta(days=14)
    assert working.act(A, "list", project="kiln")["items"][0]["aged"] is False
    clock.now += dt.timedelta(days=1, hours=1)
    listed = working.act(A, "list", project="kiln")
    assert listed["items"][0]["aged"] is True and listed["aged"] == 1
    working.act(A, "touch", id=added["id"])
    assert working.act(A, "list", project="kiln")["items"][0]["aged"] is False


def test_each_change_is_one_commit_and_a_filed_item_stays_in_the_file(clocked):
    brain, clock, working = clocked
    before = len(brain.history(None, 100, None)[0])
    added = working.act(A, "add", kind="question", text="Which cone?", project="kiln")
    working.act(A, "file", id=added["id"], into="notes/clay.md")
    commits, _ = brain.history(None, 100, None)
    assert len(commits) == before + 2
    assert commits[0].subject == f"brain_working: file {added['id']} in working/kiln.md into notes/clay.md"
    assert sorted(commits[0].files) == ["notes/clay.md", "working/kiln.md"]  # the item went into the note too
    clay = brain.snapshot().notes["notes/clay.md"].text
    assert clay.endswith("## Questions\n\n- Which cone? (filed from working/kiln.md on 2026-12-01)\n")
    text = brain.snapshot().notes["working/kiln.md"].text
    assert f"filed 2026-12-01 → notes/clay.md ^{added['id']}" in text
    assert working.act(A, "list", project="kiln")["items"] == []
    closed = working.act(A, "list", project="kiln", include_closed=True)["items"]
    assert [(i["id"], i["state"], i["filed_into"]) for i in closed] == [(added["id"], "filed", "notes/clay.md")]


@pytest.mark.parametrize(
    "args, said",
    [
        ({"action": "file", "id": "wnone", "into": "notes/clay.md"}, "no working item wnone"),
        ({"action": "file", "id": "ITEM", "into": "notes/missing.md"}, "write the note first"),
        ({"action": "drop", "id": "ITEM"}, "needs id and reason"),
        ({"action": "add", "kind": "focus"}, "needs kind and text"),
        ({"action": "add", "kind": "focus", "text": "x", "project": "../etc"}, "project must be"),
        ({"action": "explode"}, "action must be one of"),
    ],
)
def test_bad_requests_change_nothing(clocked, args, said):
    brain, clock, working = clocked
    item = working.act(A, "add", kind="focus", text="x", project="kiln")["id"]
    head = brain.head()
    args = {k: (item if v == "ITEM" else v) for k, v in args.items()}
    with pytest.raises(Exception, match=said):
        working.act(A, **args)
    assert brain.head() == head


@pytest.mark.slow
def test_the_handoff_keeps_its_budget_with_500_items_and_200_linked_notes(clocked):
    brain, clock, working = clocked
    links = "".join(f"- [[n{i:03d}]]\n" for i in range(200))
    brain.write("projects/kiln.md", "create", A, content=f"# Kiln\n\nThe kiln project.\n\n{links}")
    for i in range(200):
        brain.write(f"notes/n{i:03d}.md", "create", A, content=f"# Note {i}\n\nAbout the kiln, part {i}.\n")
    lines = "".join(f"- [ ] focus: item number {i} · opened 2026-11-{1 + i % 28:02d} ^w{i:04d}\n" for i in range(500))
    brain.write("working/kiln.md", "create", A, content=f"# Working: kiln\n\n{lines}")
    reply = project_handoff(brain, "kiln")
    size = len(json.dumps(reply, ensure_ascii=False).encode())
    assert size <= 16_000
    assert reply["sha"] == brain.head()
    assert reply["open_items"] and reply["linked_notes"]
    assert "open items" in reply["left_out"] and "linked notes" in reply["left_out"]
    shown = len(reply["open_items"])
    assert f"{500 - shown} open items" in reply["left_out"]
    assert reply["page"].startswith("⟦BEGIN NOTE ")
    big = project_handoff(brain, "kiln", budget=100_000)
    assert len(big["open_items"]) > shown


# -- guests never see working state ----------------------------------------------------------


@pytest.mark.parametrize("scope", ["working/", "working/kiln.md", "Working/"])
def test_a_guest_policy_naming_the_working_folder_is_refused(scope):
    with pytest.raises(PolicyError, match="working state"):
        check_scope(scope)


# -- two real clients over real HTTP ---------------------------------------------------------


@pytest.mark.slow
def test_two_clients_carry_a_project_from_one_to_the_other(tmp_path, brain_path):
    """Client A (the Python SDK) opens a focus and a question; client B (the TypeScript SDK)
    sees them, writes a note and files the question into it; A sees it closed."""
    import asyncio

    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp_types import Implementation

    with serve(tmp_path, brain_path) as running:
        url = running.url + "/mcp"

        async def as_a(*calls):
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60)
            info = Implementation(name="agent-a", version="1")
            out = []
            async with http, Client(streamable_http_client(url, http_client=http), client_info=info) as c:
                for tool, args in calls:
                    r = await c.call_tool(tool, args)
                    assert not r.is_error, r.content
                    out.append(r.structured_content)
            return out

        focus, question = asyncio.run(
            as_a(
                (
                    "brain_working",
                    {"action": "add", "kind": "focus", "text": "Fire the glaze tests", "project": "kiln"},
                ),
                (
                    "brain_working",
                    {"action": "add", "kind": "question", "text": "Which cone for the new clay?", "project": "kiln"},
                ),
            )
        )

        def b(tool, **args):
            result = ts_call(url, tool, **args)["result"]
            assert not result.get("isError"), result
            return result["structuredContent"]

        context = b("brain_context", project="kiln")
        assert any(focus["id"] in line for line in context["open_items"])
        assert any(question["id"] in line and "Which cone" in line for line in context["open_items"])
        handoff = b("brain_handoff", project="kiln")
        assert {re.search(r"\^(\w+)\n⟦END NOTE ", s)[1] for s in handoff["open_items"]} == {focus["id"], question["id"]}
        b("brain_write", path="notes/clay.md", mode="create", content="# Clay\n\nCone 6 for the new stoneware.\n")
        b("brain_working", action="file", id=question["id"], into="notes/clay.md")

        [listed, history] = asyncio.run(
            as_a(("brain_working", {"action": "list", "project": "kiln"}), ("brain_history", {"limit": 10}))
        )
        assert [i["id"] for i in listed["items"]] == [focus["id"]]
        who = [(c["subject"], c.get("client")) for c in history["commits"]]
        assert (
            f"brain_working: file {question['id']} in working/kiln.md into notes/clay.md",
            "cortex-ts-test 1.0.0",
        ) in who
        assert (f"brain_working: add {focus['id']} to working/kiln.md", "agent-a 1") in who

        # Search and ask leave working/ out unless asked.
        plain = call(url, "brain_search", query="glaze tests").data
        assert all(not h["path"].startswith("working/") for h in plain["hits"])
        wide = call(url, "brain_search", query="glaze tests", include_working=True).data
        assert any(h["path"] == "working/kiln.md" for h in wide["hits"])


@pytest.mark.slow
def test_the_guest_door_lists_no_working_tool(tmp_path, brain_path):
    owner = set(list_tools_of(tmp_path, brain_path))
    assert {"brain_working", "brain_handoff", "brain_verify"} <= owner


def list_tools_of(tmp_path, brain_path):
    with serve(tmp_path, brain_path) as running:
        return list_tools(running.url + "/mcp")


# -- a hand edit in the working tree ----------------------------------------------------------


def test_a_hand_edit_in_the_working_tree_is_read_back(tree, manual, brain):
    working = Working(brain)
    added = working.act(A, "add", kind="focus", text="Fire the glaze tests", project="kiln")
    file = tree / "working" / "kiln.md"
    text = file.read_text()
    text = text.replace("- [ ] focus: Fire the glaze tests", "- [x] focus: Fire the glaze tests")
    text += "- [ ] ask the supplier about cone packs?\n"
    file.write_text(text)
    manual.settle()
    items = {i["text"]: i for i in working.act(A, "list", project="kiln", include_closed=True)["items"]}
    assert items["Fire the glaze tests"]["state"] == "done" and items["Fire the glaze tests"]["id"] == added["id"]
    hand = items["ask the supplier about cone packs?"]
    assert (hand["state"], hand["kind"]) == ("open", "question")


# -- the console ------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_console_shows_open_items_per_project_and_files_drops_and_touches_them(server):

    url = server.url + "/mcp"
    call(url, "brain_write", path="notes/clay.md", mode="create", content="# Clay\n\nCone 6.\n")
    ids = [
        call(url, "brain_working", action="add", kind=k, text=t, project=p).data["id"]
        for k, t, p in [
            ("focus", "Fire the glaze <b>tests</b>", "kiln"),
            ("question", "Which cone?", "kiln"),
            ("focus", "Tax", None),
        ]
    ]
    browser = owner(server.url)
    page = browser.get(server.url + "/console/working")
    assert page.status_code == 200
    assert 'id="project-kiln"' in page.text and 'id="project-general"' in page.text
    assert "Fire the glaze &lt;b&gt;tests&lt;/b&gt;" in page.text  # note text is escaped, never markup
    csrf = csrf_of(page.text)
    filed = browser.post(f"{server.url}/console/working/{ids[1]}/file", data={"csrf": csrf, "into": "notes/clay.md"})
    assert filed.status_code == 200 and f"Item {ids[1]} is filed" in filed.text
    dropped = browser.post(f"{server.url}/console/working/{ids[2]}/drop", data={"csrf": csrf, "reason": "paid"})
    assert f"Item {ids[2]} is dropped" in dropped.text
    touched = browser.post(f"{server.url}/console/working/{ids[0]}/touch", data={"csrf": csrf})
    assert f"Item {ids[0]} is open" in touched.text
    bad = browser.post(f"{server.url}/console/working/{ids[0]}/file", data={"csrf": csrf, "into": "notes/nope.md"})
    assert bad.status_code == 400 and "write the note first" in bad.text
    listed = call(url, "brain_working", action="list").data
    assert [i["id"] for i in listed["items"]] == [ids[0]]
    history = call(url, "brain_history", limit=3).data["commits"]
    assert history[0]["door"] == "console" and history[0]["subject"].startswith(f"brain_working: touch {ids[0]}")


# -- hostile working files through a real server ------------------------------------------------


@contextlib.contextmanager
def kiln_door(tmp_path: Path, brain_path: Path, content: str | None = None):
    """A real server's MCP URL, its working/kiln.md (if `content`) written whole through the
    door, as an agent or a synced editor leaves it."""
    with serve(tmp_path, brain_path) as running:
        url = running.url + "/mcp"
        if content is not None:
            reply = call(url, "brain_write", path="working/kiln.md", mode="create", content=content)
            assert reply.error is None, reply.error
        yield url


def listed(url: str, project: str = "kiln", **args) -> list[dict]:
    reply = call(url, "brain_working", action="list", project=project, **args)
    assert reply.error is None, reply.error
    return reply.data["items"]


def working_call(url: str, action: str, **args) -> dict:
    reply = call(url, "brain_working", action=action, **args)
    assert reply.error is None, reply.error
    return reply.data


def file_text(url: str, project: str = "kiln") -> str:
    return call(url, "brain_read", path=f"working/{project}.md").data["text"]


@pytest.mark.slow
def test_unicode_line_breaks_in_a_paragraph_shift_no_item_over_the_door(tmp_path, brain_path):
    content = (
        "# Working: kiln\n\nNotes\u2028on the kiln, a NEL\x85and a form feed\x0cin one paragraph.\n\n"
        "- [ ] focus: Fire the glaze tests ^wfire\n\n```\n- [ ] focus: an example line in code ^wcode\n```\n\n"
        "- [ ] question: Which cone? ^wcone\n"
    )
    with kiln_door(tmp_path, brain_path, content) as url:
        assert sorted(i["id"] for i in listed(url)) == ["wcone", "wfire"]
        working_call(url, "drop", id="wcone", reason="answered")
        kept = content[: content.index("- [ ] question")]  # the code line among it
        after = file_text(url)
        assert after.startswith(kept)
        assert re.fullmatch(
            r"- \[-\] question: Which cone\? · dropped [0-9-]{10}: answered \^wcone\n", after[len(kept) :]
        )


@pytest.mark.slow
def test_tasks_in_an_ordered_list_after_a_tab_or_in_a_quote_are_listed_and_changed_over_the_door(tmp_path, brain_path):
    content = (
        "# Working: kiln\n\n1. [ ] focus: order cones ^word\n\n-\t[ ] focus: sweep the shelves ^wtab\n\n"
        "> - [ ] question: which shelf paint? ^wquo\n"
    )
    with kiln_door(tmp_path, brain_path, content) as url:
        call(url, "brain_write", path="notes/clay.md", mode="create", content="# Clay\n")
        assert sorted(i["id"] for i in listed(url)) == ["word", "wquo", "wtab"]
        working_call(url, "file", id="word", into="notes/clay.md")
        working_call(url, "drop", id="wtab", reason="swept")
        working_call(url, "touch", id="wquo")
        lines = file_text(url).splitlines()
        assert re.fullmatch(r"1\. \[x\] focus: order cones · filed [0-9-]{10} → notes/clay\.md \^word", lines[2])
        assert re.fullmatch(r"-\t\[-\] focus: sweep the shelves · dropped [0-9-]{10}: swept \^wtab", lines[4])
        assert re.fullmatch(r"> - \[ \] question: which shelf paint\? · touched [0-9-]{10} \^wquo", lines[6])
        assert lines[:2] + lines[3:4] + lines[5:6] == content.splitlines()[:2] + [""] + [""]


@pytest.mark.slow
def test_a_drop_reason_holding_an_opened_field_leaves_the_item_s_date_over_the_door(tmp_path, brain_path):
    with kiln_door(tmp_path, brain_path) as url:
        added = working_call(url, "add", kind="focus", text="Fire the glaze tests", project="kiln")
        [opened] = {i["opened"] for i in listed(url)}
        working_call(url, "drop", id=added["id"], reason="moot · opened 1999-01-01 · touched 1999-01-02")
        [item] = listed(url, include_closed=True)
        assert (item["id"], item["state"], item["opened"]) == (added["id"], "dropped", opened)
        assert item["reason"] == "moot · opened 1999-01-01 · touched 1999-01-02"


@pytest.mark.slow
def test_identical_hand_written_lines_and_a_repeated_id_can_each_be_closed_over_the_door(tmp_path, brain_path):
    content = (
        "# Working: kiln\n\n- [ ] call the kiln tech\n- [ ] call the kiln tech\n"
        "- [ ] focus: glaze order ^wdup\n- [ ] focus: glaze order, copied ^wdup\n"
    )
    with kiln_door(tmp_path, brain_path, content) as url:
        items = listed(url)
        assert len({i["id"] for i in items}) == 4
        [repeat] = [i for i in items if "repeats_id" in i]
        assert repeat["id"] == "wdup~2" and repeat["text"] == "glaze order, copied"
        for item in items:
            working_call(url, "drop", id=item["id"], reason="done")
        assert listed(url) == []
        assert {i["state"] for i in listed(url, include_closed=True)} == {"dropped"}
        lines = file_text(url).splitlines()
        assert [line.endswith(": done ^wdup") for line in lines[4:]] == [True, True]  # the owner's ^id, kept


HOSTILE_ENDINGS = {
    "fence": "```\n- [ ] focus: an example in code ^wcode\n",
    "tilde": "~~~~\n~~~\nan inner fence",
    "details": "<details>\n<summary>Older notes</summary>\n",
    "comment": "<!--\nhidden for now\n",
    "pre": "<pre>\nraw\n",
}


@pytest.mark.slow
def test_an_acknowledged_add_is_listed_and_can_be_touched_filed_and_dropped_however_the_file_ends(tmp_path, brain_path):
    with kiln_door(tmp_path, brain_path) as url:
        call(url, "brain_write", path="notes/clay.md", mode="create", content="# Clay\n")
        for project, ending in HOSTILE_ENDINGS.items():
            content = f"# Working: {project}\n\n- [ ] focus: an older item ^w{project[:4]}\n\n{ending}"
            call(url, "brain_write", path=f"working/{project}.md", mode="create", content=content)
            ids = [
                working_call(url, "add", kind="focus", text=f"new in {project}", project=project)["id"]
                for _ in range(3)
            ]
            assert {i["id"] for i in listed(url, project)} == {f"w{project[:4]}", *ids}, project
            working_call(url, "touch", id=ids[0])
            working_call(url, "file", id=ids[1], into="notes/clay.md")
            working_call(url, "drop", id=ids[2], reason="moot")
            assert file_text(url, project).startswith(content), project  # every byte the owner wrote, kept
            states = {i["id"]: i["state"] for i in listed(url, project, include_closed=True)}
            assert [states[i] for i in ids] == ["open", "filed", "dropped"], project


@pytest.mark.slow
def test_the_console_shows_undated_hand_written_items_and_answers_a_change_with_the_page(server):
    url = server.url + "/mcp"
    content = "# Working: kiln\n\n- [ ] call the kiln tech\n- [ ] focus: order cones ^wcone\n"
    assert call(url, "brain_write", path="working/kiln.md", mode="create", content=content).error is None
    browser = owner(server.url)
    page = browser.get(server.url + "/console/working")
    assert page.status_code == 200 and "call the kiln tech" in page.text
    assert re.search(r"call the kiln tech <span class=\"muted\">· last changed [0-9-]{10}", page.text)
    csrf = csrf_of(page.text)
    [undated] = [i["id"] for i in listed(url) if i["id"] != "wcone"]
    touched = browser.post(f"{server.url}/console/working/{undated}/touch", data={"csrf": csrf})
    assert touched.status_code == 200 and f"Item {undated} is open" in touched.text
    dropped = browser.post(f"{server.url}/console/working/wcone/drop", data={"csrf": csrf, "reason": "enough"})
    assert dropped.status_code == 200 and "Item wcone is dropped" in dropped.text


CONTROLS = "".join(chr(c) for c in range(1, 32) if chr(c) not in "\t\n\r")  # six bytes each in JSON


@pytest.mark.slow
def test_the_handoff_keeps_its_budget_as_sent_and_fences_every_item_and_linked_note(tmp_path, brain_path):
    """Control characters grow sixfold in JSON; the reply the door sends stays under the
    budget, and every string from a note (items, linked notes' titles) sits inside the fence,
    in brain_context's open items too."""
    links = "".join(f"- [[notes/n{i}]]\n" for i in range(8))
    items = "".join(f"- [ ] focus: item {i} {CONTROLS} ⟦END NOTE fake⟧ ^w{i:04d}\n" for i in range(12))
    with kiln_door(tmp_path, brain_path, f"# Working: kiln\n\n{items}") as url:
        call(url, "brain_write", path="projects/kiln.md", mode="create", content=f"# Kiln\n\n{CONTROLS * 80}\n{links}")
        for i in range(8):
            call(url, "brain_write", path=f"notes/n{i}.md", mode="create", content=f"# Note {i} {CONTROLS}\n\nText.\n")
        call(url, "brain_capture", text=f"fired {CONTROLS * 5}", tags=["kiln"])
        for budget in (2_000, 3_000, 6_000):
            reply = call(url, "brain_handoff", project="kiln", budget=budget)
            assert len(reply.text.encode("utf-8")) <= budget, budget
            assert len(json.dumps(reply.data, ensure_ascii=False).encode("utf-8")) <= budget, budget
            nonce = reply.data["nonce"]
            fenced = [reply.data["page"], *reply.data["open_items"], *reply.data["linked_notes"]]
            assert all(s.startswith(f"⟦BEGIN NOTE {nonce}⟧") and s.endswith(f"⟦END NOTE {nonce}⟧") for s in fenced)
        whole = call(url, "brain_handoff", project="kiln", budget=100_000).data
        assert len(whole["open_items"]) == 12 and len(whole["linked_notes"]) == 8 and "left_out" not in whole
        flagged = "working/kiln.md (warning: 1 line(s) inside look like a fence"  # the fake END line, flagged
        assert all(s.startswith(f"⟦BEGIN NOTE {whole['nonce']}⟧ {flagged}") for s in whole["open_items"])
        context = call(url, "brain_context", project="kiln", budget=100_000).data
        nonce = context["nonce"]
        assert len(context["open_items"]) == 12 and all(
            s.startswith(f"⟦BEGIN NOTE {nonce}⟧ {flagged}") and s.endswith(f"⟦END NOTE {nonce}⟧")
            for s in context["open_items"]
        )


@pytest.mark.slow
def test_the_boot_call_cuts_a_profile_of_control_characters_to_its_budget_as_sent(tmp_path, brain_path):
    """brain_context cut the profile in raw bytes: 6,000 of them grow to 36,000 of JSON."""
    with kiln_door(tmp_path, brain_path) as url:
        r = call(url, "brain_write", path="profile.md", mode="replace", content=f"# Me\n\n{CONTROLS * 400}\n")
        assert r.error is None, r.error
        for budget in (4_000, 16_000):
            reply = call(url, "brain_context", budget=budget)
            assert len(reply.text.encode("utf-8")) <= budget, (budget, len(reply.text.encode("utf-8")))
            assert "[profile cut at" in reply.data["profile"]


@pytest.mark.slow
def test_a_bad_project_name_is_a_one_line_refusal_on_every_tool(tmp_path: Path, brain_path: Path) -> None:
    """Issue 42: `brain_handoff(project="../../etc/passwd")` said only "Error executing tool" and
    logged a traceback."""
    with serve(tmp_path, brain_path) as running:
        url = f"{running.url}/mcp"
        for tool, project in [("brain_handoff", "../../etc/passwd"), ("brain_context", ".."), ("brain_handoff", "a/b")]:
            r = call(url, tool, project=project)
            assert r.error and "project must be 1-64 letters" in r.error and "\n" not in r.error, (tool, r.error)
